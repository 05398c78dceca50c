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
	s     model.Sharing
	order []int32    // shuffled prompt indices (PromptsPerGroup > 0)
	r     *rand.Rand // group draws (PromptsPerGroup 0)
}

func newSharer(s model.Sharing, seed uint64) *sharer {
	sh := &sharer{s: s, r: newStream(seed, streamSharing)}
	if n := s.Groups * s.PromptsPerGroup; n > 0 {
		sh.order = make([]int32, n)
		for i := range sh.order {
			sh.order[i] = int32(i)
		}
		sh.r.Shuffle(n, func(i, j int) { sh.order[i], sh.order[j] = sh.order[j], sh.order[i] })
	}
	return sh
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
	x.group = mix(g + 1)
	x.out = mix(uint64(id)<<1 ^ 0x6f7574000000)
	x.shared = sh.s.SharedLen
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
	group, rest, out uint64
	shared           int       // tokens of the group's prefix
	refs             []*cblock // cache blocks it references
	reg              int       // blocks of its sequence already looked up or registered
}

// blockKey is the key of block b (tokens b·block … (b+1)·block−1) of a
// request of prompt tokens: its last token's segment and position.
func (x *prefixTag) blockKey(b, block, prompt int) uint64 {
	p := (b+1)*block - 1
	seg := x.out
	switch {
	case p < x.shared:
		seg = x.group
	case p < prompt:
		seg = x.rest
	}
	return mix(seg ^ uint64(p)*0x9e3779b97f4a7c15)
}

// cblock is one cached KV block: referenced by running requests (refs >
// 0, counted in the engine's used blocks) or idle in the LRU list (free,
// holding its content until a new allocation needs the space).
type cblock struct {
	key        uint64
	refs       int32
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
	head, tail *cblock // idle blocks, head the least recently used
	idle       int64
	spare      []*cblock
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
	for n < limit {
		b, ok := c.m[r.px.blockKey(n, c.unit, r.prompt)]
		if !ok {
			break
		}
		if b.refs == 0 {
			idle++
		}
		n++
	}
	return n * c.per, idle * c.per
}

// acquire makes r reference its first n blocks, which hits found.
func (c *prefixCache) acquire(r *request, n int) {
	n /= c.per
	for b := range n {
		cb := c.m[r.px.blockKey(b, c.unit, r.prompt)]
		if cb.refs == 0 {
			c.unlink(cb)
		}
		cb.refs++
		r.px.refs = append(r.px.refs, cb)
	}
	r.px.reg = n
}

// register hands r's computed full blocks up to tokens to the cache, as
// blocks r references: the ones whose content is not cached yet. It
// returns how many blocks moved from r's own to the cache.
func (c *prefixCache) register(r *request, tokens int) int {
	moved := 0
	for ; r.px.reg < tokens/c.unit; r.px.reg++ {
		k := r.px.blockKey(r.px.reg, c.unit, r.prompt)
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

// finish caches r's remaining full blocks of tokens as idle, then drops
// its references, the sequence's last blocks first in the LRU order (as
// vLLM frees a request's blocks in reverse, to evict its tail first). It
// returns how many referenced blocks became idle (the newly cached ones
// were r's own, already free).
func (c *prefixCache) finish(r *request, tokens int) int64 {
	var fresh []uint64
	for ; r.px.reg < tokens/c.unit; r.px.reg++ {
		k := r.px.blockKey(r.px.reg, c.unit, r.prompt)
		if _, ok := c.m[k]; !ok {
			fresh = append(fresh, k)
		}
	}
	for i := len(fresh) - 1; i >= 0; i-- {
		cb := c.newBlock(fresh[i])
		c.m[fresh[i]] = cb
		c.pushIdle(cb)
	}
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
	for c.idle*int64(c.per) > free {
		cb := c.head
		c.unlink(cb)
		delete(c.m, cb.key)
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
	c.idle++
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
	c.idle--
}
