package sim

// poolMon accumulates one pool's statistics.
type poolMon struct {
	name        string
	workers     int
	busy        float64 // Σ step durations over workers
	batchArea   float64 // Σ sequences × step duration
	queue       int
	queueArea   float64
	queueT      float64
	capBlocks   int64 // per worker; 0 when unlimited or not tracked
	used        int64 // KV blocks allocated over the pool
	kvArea      float64
	kvT         float64
	kvMaxUsed   int64 // the most KV blocks one worker has held
	preemptions int
	series      []Sample
	running     func() int // sequences in the pool's current steps
}

// queueAdd and kvTouch add nothing to their areas when called again at
// the same time: a product by 0 added to an area (never −0) leaves it
// as it is, and a step end touches them once per request it ends.
func (p *poolMon) queueAdd(t float64, d int) {
	if t != p.queueT {
		p.queueArea += float64(p.queue) * (t - p.queueT)
		p.queueT = t
	}
	p.queue += d
}

func (p *poolMon) kvTouch(t float64) {
	if t != p.kvT {
		p.kvArea += float64(p.used) * (t - p.kvT)
		p.kvT = t
	}
}

func (p *poolMon) kvUsage() float64 {
	if p.capBlocks == 0 {
		return 0
	}
	return float64(p.used) / (float64(p.capBlocks) * float64(p.workers))
}

func (p *poolMon) snapshot(s *simulator, t float64) Sample {
	b := 0.0
	if p.running != nil {
		b = float64(p.running()) / float64(p.workers)
	}
	q := float64(p.queue)
	if p.name == FrontendPool {
		q = float64(s.inAPIServers()) // its waits are summed as requests pass (simulator.passFrontend), not counted
	}
	return Sample{T: t, Queue: q, Batch: b, KVUsage: p.kvUsage()}
}

func (p *poolMon) stats(s *simulator, dur float64) PoolStats {
	p.queueAdd(dur, 0)
	p.kvTouch(dur)
	return p.windowStats(dur)
}

// windowStats is the pool's statistics over a window of dur seconds whose
// accumulated areas p holds.
func (p *poolMon) windowStats(dur float64) PoolStats {
	st := PoolStats{Name: p.name, Preemptions: p.preemptions, Series: p.series}
	if p.capBlocks > 0 {
		st.MaxKVUsage = float64(p.kvMaxUsed) / float64(p.capBlocks)
	}
	if dur > 0 {
		st.Utilisation = p.busy / (float64(p.workers) * dur)
		st.MeanQueue = p.queueArea / dur
		if p.capBlocks > 0 {
			st.MeanKVUsage = p.kvArea / (float64(p.capBlocks) * float64(p.workers) * dur)
		}
	}
	if p.busy > 0 {
		st.MeanBatch = p.batchArea / p.busy
	}
	return st
}
