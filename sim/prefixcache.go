package sim

import (
	"math/rand/v2"

	"github.com/capsim/capsim/model"
)

// streamSharing draws the order of the shared prompts and the prefixes of
// prefix_repetition requests.
const streamSharing = 0x73686172 // "shar"

// sharer hands each sent request its content identity.
type sharer struct {
	s        model.Sharing
	order    []int32    // shuffled prompt indices (PromptsPerGroup > 0)
	r        *rand.Rand // group draws (PromptsPerGroup 0)
	sessions []session  // multi-turn: one conversation per distinct prompt
}

// session is a multi-turn conversation's history: its segments (system
// prompt, then each turn's question and answer) and where it stands.
type session struct {
	segs       []segment
	n          int // tokens of history
	turn, conv int
}

// segment is a run of tokens ending before end whose content, and
// everything before it, key names.
type segment struct {
	end int
	key uint64
}

func newSharer(s model.Sharing, seed uint64) *sharer {
	sh := &sharer{s: s, r: newStream(seed, streamSharing)}
	if n := s.Groups * s.PromptsPerGroup; n > 0 {
		sh.order = make([]int32, n)
		for i := range sh.order {
			sh.order[i] = int32(i)
		}
		sh.r.Shuffle(n, func(i, j int) { sh.order[i], sh.order[j] = sh.order[j], sh.order[i] })
		if s.Turns > 1 {
			sh.sessions = make([]session, n)
		}
	}
	return sh
}

// converse makes request id the next turn of its conversation (Turns >
// 1): the history so far and a question of the drawn prompt less the
// system prompt, answered in out tokens. It returns the prompt's length.
func (sh *sharer) converse(x *prefixTag, id, prompt, out int) int {
	k := int(sh.order[id%len(sh.order)])
	ss := &sh.sessions[k]
	base := mix(uint64(k+1)<<20 ^ 0x636f6e76)
	if ss.segs == nil || ss.turn == sh.s.Turns {
		// A new conversation: its system prompt is its group's.
		ss.conv++
		ss.turn, ss.n, ss.segs = 0, 0, ss.segs[:0]
		if s := sh.s.SharedLen; s > 0 {
			ss.n = s
			ss.segs = append(ss.segs, segment{s, mix(uint64(k/sh.s.PromptsPerGroup) + 1)})
		}
	}
	conv := mix(base ^ uint64(ss.conv))
	q := max(prompt-sh.s.SharedLen, 1)
	ss.segs = append(ss.segs, segment{ss.n + q, mix(conv ^ uint64(2*ss.turn+1))})
	x.segs = append(x.segs[:0], ss.segs...)
	x.out = mix(conv ^ uint64(2*ss.turn+2))
	prompt = ss.n + q
	ss.segs = append(ss.segs, segment{prompt + out, x.out})
	ss.n = prompt + out
	ss.turn++
	return prompt
}

// tag fills the content identity of request id into x: keys of its
// group's prefix, its prompt's rest and its output. A rest key stands for
// the whole prompt up to it, so a block's key (blockKey) names every token
// before it too.
func (sh *sharer) tag(x *prefixTag, id int) {
	var g, q uint64
	if sh.order != nil {
		k := uint64(sh.order[id%len(sh.order)])
		g, q = k/uint64(sh.s.PromptsPerGroup), k%uint64(sh.s.PromptsPerGroup)
		x.rest = mix(mix(g+1) ^ (q+1)*0x9e3779b97f4a7c15)
	} else {
		g = uint64(sh.r.IntN(sh.s.Groups))
		x.rest = mix(uint64(id)<<1 | 1 ^ 0x726573740000)
	}
	x.restUnique = sh.order == nil
	x.group = mix(g + 1)
	x.shared = sh.s.SharedLen
	x.segs = x.segs[:0]
}

// mix is SplitMix64's finaliser: distinct inputs give well-spread keys.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// prefixTag is a request's content identity and its hold on a replica's
// prefix cache (nil on requests of a run without one).
type prefixTag struct {
	// segs, out: a multi-turn request's segments and its answer's key
	// (the next turn's prompt holds the answer); empty otherwise.
	segs        []segment
	out         uint64
	group, rest uint64
	shared      int       // tokens of the group's prefix
	restUnique  bool      // its prompt's rest is its own: no later request shares it
	refs        []*cblock // cache blocks it references
	reg         int       // units of its sequence already looked up or registered
}

// blockKey is the key of unit b (tokens b·unit … (b+1)·unit−1) of a
// request of prompt tokens: its last token's segment and position. own
// says no other request can hold that content (its own rest or output),
// so the cache does not index it.
func (x *prefixTag) blockKey(b, unit, prompt int) (key uint64, own bool) {
	p := (b+1)*unit - 1
	if len(x.segs) > 0 {
		key := x.out
		for _, sg := range x.segs {
			if p < sg.end {
				key = sg.key
				break
			}
		}
		return mix(key ^ uint64(p)*0x9e3779b97f4a7c15), false
	}
	switch {
	case p < x.shared:
		return mix(x.group ^ uint64(p)*0x9e3779b97f4a7c15), false
	case p < prompt:
		return mix(x.rest ^ uint64(p)*0x9e3779b97f4a7c15), x.restUnique
	}
	return 0, true
}

// cblock is one cached unit of KV blocks: referenced by running requests
// (refs > 0, counted in the engine's used blocks) or idle in the LRU list
// (free, holding its content until a new allocation needs the space). An
// anonymous run (anon > 0) stands for that many idle units no request can
// hit (finished requests' own suffixes and outputs): they hold free space
// in LRU order, as vLLM keeps them, without an index entry each.
type cblock struct {
	key        uint64
	refs       int32
	anon       int64
	prev, next *cblock
}

// prefixCache is one replica's block-level prefix cache (vLLM V1's
// automatic prefix caching): full blocks keyed by their content, idle ones
// evicted least recently used first. It keeps units of per engine blocks,
// unit tokens in all: one block, or for blocks under minUnit tokens
// (SGLang's radix cache, page size 1) enough of them to make minUnit, so
// that a lookup is not a map probe per token; a hit is then rounded down
// to a whole unit. Its counts (hits, references) are in engine blocks.
type prefixCache struct {
	unit, per  int
	m          map[uint64]*cblock
	head, tail *cblock // idle units, head the least recently used
	idle       int64   // idle units, anonymous runs included
	spare      []*cblock
	fresh      []uint64  // finish's scratch
	found      []*cblock // the units the last hits found, for acquire
}

// maxIdleUnbounded bounds the idle blocks of a cache with no KV capacity.
const maxIdleUnbounded = 1 << 20

// minUnit is the fewest tokens a prefix cache keeps as one unit.
const minUnit = 16

func newPrefixCache(block int) *prefixCache {
	per := (minUnit + block - 1) / block
	return &prefixCache{m: map[uint64]*cblock{}, unit: per * block, per: per}
}

// hits is how many leading blocks of r's first tokens tokens the cache
// holds, in whole units of at most tokens−1 tokens (the last token is
// computed), and how many of them are idle.
func (c *prefixCache) hits(r *request, tokens int) (n, idle int) {
	limit := (tokens - 1) / c.unit
	c.found = c.found[:0]
	for n < limit {
		k, own := r.px.blockKey(n, c.unit, r.prompt)
		if own {
			break
		}
		b, ok := c.m[k]
		if !ok {
			break
		}
		if b.refs == 0 {
			idle++
		}
		c.found = append(c.found, b)
		n++
	}
	return n * c.per, idle * c.per
}

// acquire makes r reference its first n blocks, which the call of hits
// just before, for r, found.
func (c *prefixCache) acquire(r *request, n int) {
	n /= c.per
	for _, cb := range c.found[:n] {
		if cb.refs == 0 {
			c.unlink(cb)
			c.idle--
		}
		cb.refs++
		r.px.refs = append(r.px.refs, cb)
	}
	r.px.reg = n
}

// register hands r's computed full units up to tokens to the cache, as
// units r references: the ones whose content is not cached yet and that
// other requests can share. It returns how many blocks moved from r's own
// to the cache.
func (c *prefixCache) register(r *request, tokens int) int {
	moved := 0
	for ; r.px.reg < tokens/c.unit; r.px.reg++ {
		k, own := r.px.blockKey(r.px.reg, c.unit, r.prompt)
		if own {
			break // the rest of its sequence is its own
		}
		if _, ok := c.m[k]; ok {
			continue // computed twice: r keeps its copy
		}
		cb := c.newBlock(k)
		cb.refs = 1
		c.m[k] = cb
		r.px.refs = append(r.px.refs, cb)
		moved += c.per
	}
	return moved
}

// finish caches r's remaining full units of tokens as idle (its own ones
// as an anonymous run), then drops its references, the sequence's last
// units first in the LRU order (as vLLM frees a request's blocks in
// reverse, to evict its tail first). It returns how many referenced
// blocks became idle (the newly cached ones were r's own, already free).
func (c *prefixCache) finish(r *request, tokens int) int64 {
	end := tokens / c.unit
	fresh := c.fresh[:0]
	for ; r.px.reg < end; r.px.reg++ {
		k, own := r.px.blockKey(r.px.reg, c.unit, r.prompt)
		if own {
			break
		}
		if _, ok := c.m[k]; !ok {
			fresh = append(fresh, k)
		}
	}
	if n := end - r.px.reg; n > 0 {
		cb := c.newBlock(0)
		cb.anon = int64(n)
		c.pushIdle(cb)
		c.idle += cb.anon
	}
	for i := len(fresh) - 1; i >= 0; i-- {
		cb := c.newBlock(fresh[i])
		c.m[fresh[i]] = cb
		c.pushIdle(cb)
		c.idle++
	}
	c.fresh = fresh
	return c.release(r)
}

// release drops r's references (preemption: it recomputes later) and
// returns how many blocks became idle.
func (c *prefixCache) release(r *request) int64 {
	var n int64
	refs := r.px.refs
	for i := len(refs) - 1; i >= 0; i-- {
		cb := refs[i]
		cb.refs--
		if cb.refs == 0 {
			c.pushIdle(cb)
			c.idle++
			n++
		}
		refs[i] = nil
	}
	r.px.refs, r.px.reg = refs[:0], 0
	return n * int64(c.per)
}

// trim evicts idle units, least recently used first, until at most free
// blocks hold them.
func (c *prefixCache) trim(free int64) {
	drop := c.idle - max(free, 0)/int64(c.per)
	for drop > 0 {
		cb := c.head
		if cb.anon > 0 {
			k := min(cb.anon, drop)
			cb.anon -= k
			c.idle -= k
			drop -= k
			if cb.anon > 0 {
				return
			}
			c.unlink(cb)
		} else {
			c.unlink(cb)
			delete(c.m, cb.key)
			c.idle--
			drop--
		}
		c.spare = append(c.spare, cb)
	}
}

func (c *prefixCache) newBlock(k uint64) *cblock {
	if n := len(c.spare); n > 0 {
		cb := c.spare[n-1]
		c.spare = c.spare[:n-1]
		*cb = cblock{key: k}
		return cb
	}
	return &cblock{key: k}
}

func (c *prefixCache) pushIdle(cb *cblock) {
	cb.prev, cb.next = c.tail, nil
	if c.tail != nil {
		c.tail.next = cb
	} else {
		c.head = cb
	}
	c.tail = cb
}

func (c *prefixCache) unlink(cb *cblock) {
	if cb.prev != nil {
		cb.prev.next = cb.next
	} else {
		c.head = cb.next
	}
	if cb.next != nil {
		cb.next.prev = cb.prev
	} else {
		c.tail = cb.prev
	}
	cb.prev, cb.next = nil, nil
}
