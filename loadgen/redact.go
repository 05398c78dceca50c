package loadgen

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// redact removes the options' secrets from text a server or net/http
// wrote (an error body, an in-stream error object, a transport error), so
// that a server echoing its request keeps them out of result files and
// terminals: the API key, the URL's user information, a query value, and
// their base64 forms (a Basic Authorization header is base64 of
// "user:password").
func (o *Options) redact(text string) string {
	for _, s := range o.secrets() {
		text = strings.ReplaceAll(text, s, "xxxxx")
	}
	return text
}

// secrets are the strings redact removes, longest first, so that a secret
// containing another goes whole.
func (o *Options) secrets() []string {
	var plain []string
	add := func(s ...string) {
		for _, v := range s {
			if v != "" {
				plain = append(plain, v)
			}
		}
	}
	add(o.APIKey)
	if u, err := url.Parse(o.URL); err == nil {
		if u.User != nil {
			pw, _ := u.User.Password()
			name := u.User.Username()
			add(u.User.String(), name+":"+pw, pw, name)
			add(name + ":***") // net/http's errors quote the URL so
		}
		for _, vs := range u.Query() {
			add(vs...)
		}
	}
	out := slices.Clone(plain)
	for _, s := range plain {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString([]byte(s)))
		}
		out = append(out, url.QueryEscape(s), url.PathEscape(s))
	}
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}
