// Package predict runs the calibrated simulator over load points for one
// deployment and workload shape, and reads the results the way a capacity
// planner does: the throughput knee, where TTFT blows up, which pool is the
// bottleneck, and how uncertain the costs behind it are.
package predict
