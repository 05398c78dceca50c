package textout

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

func TestWrite(t *testing.T) {
	v := map[string]int{"a": 1}
	print := func(w io.Writer) error {
		fmt.Fprintln(w, "prose before")
		for _, rows := range []string{"name\tn\t\nab, c\t10\t\n", "x\n"} {
			tw := NewTable(w)
			fmt.Fprint(tw, rows)
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		return nil
	}
	for _, tc := range []struct{ format, want string }{
		{"table", "prose before\n   name   n\n  ab, c  10\nx\n"},
		{"csv", "name,n\n\"ab, c\",10\n\nx\n"},
		{"json", "{\n  \"a\": 1\n}\n"},
	} {
		var b bytes.Buffer
		if err := Write(&b, tc.format, v, print); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%s: got %q, want %q", tc.format, b.String(), tc.want)
		}
	}
	if err := Write(io.Discard, "xml", v, print); err == nil {
		t.Error("format xml: want an error")
	}
}
