package model

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/capsim/capsim/engine"
	"github.com/capsim/capsim/internal/optionerr"
)

// GPU holds the spec-sheet numbers the roofline prior needs. Throughputs are
// dense (no structured sparsity) peaks.
type GPU struct {
	Name     string   `json:"name"`    // catalog name, e.g. "H20"
	Aliases  []string `json:"aliases"` // other spellings seen in benchmark files
	MemoryGB float64  `json:"memory_gb"`
	// MemoryMiB is the device memory the driver reports (nvidia-smi's
	// total, rocm-smi's VRAM total), which engines size their KV cache
	// from; 0 where not recorded (MemoryGB is then taken as decimal GB).
	// An HBM card sold as "80 GB" has 80 GiB: 7% more than 80e9 bytes.
	MemoryMiB float64 `json:"memory_mib,omitempty"`
	// CUDAMemoryMiB is the total CUDA reports (torch.cuda.mem_get_info),
	// which vLLM multiplies by its utilization, where an engine's log has
	// printed it: 460–610 MiB below nvidia-smi's on an H100, H200 and L40S
	// (the driver's own reservation); 0 where none has (CUDAMemoryBytes).
	CUDAMemoryMiB float64 `json:"cuda_memory_mib,omitempty"`
	// MemoryTBps is HBM/GDDR bandwidth in TB/s.
	MemoryTBps float64 `json:"memory_tbps"`
	// TFLOPS is dense BF16 tensor throughput (FP16 where the GPU has no BF16).
	TFLOPS float64 `json:"tflops"`
	// FP8TFLOPS and FP4TFLOPS are the dense FP8 and FP4 tensor rates; 0 where the GPU has no such tensor cores.
	FP8TFLOPS float64 `json:"fp8_tflops,omitempty"`
	FP4TFLOPS float64 `json:"fp4_tflops,omitempty"`
	// MatmulShare is the share of TFLOPS that a large dense BF16 GEMM
	// reaches in public measurements (the best over large square shapes,
	// cuBLAS or hipBLASLt), cited in Source; 0 where none was found.
	// Spec peaks are boost-clock figures that some GPUs approach and others
	// (power-capped, or with immature libraries) reach barely half of.
	MatmulShare float64 `json:"matmul_share,omitempty"`
	// FP8MatmulShare is the same for FP8 GEMMs; 0 takes MatmulShare.
	FP8MatmulShare float64 `json:"fp8_matmul_share,omitempty"`
	// MemoryShare is the share of MemoryTBps a streaming kernel reaches in
	// public measurements (BabelStream or STREAM triad, counting every byte
	// read and written), cited in Source; 0 where none was found.
	MemoryShare float64 `json:"memory_share,omitempty"`
	// L2MB is the last-level on-chip cache in MB (AMD's MI300X: its
	// Infinity Cache), cited in Source: activations a kernel writes and
	// the next reads stay there while they fit (ActivationTraffic).
	L2MB float64 `json:"l2_mb,omitempty"`
	// Interconnect names the GPU-to-GPU link of the usual server (Interconnects).
	Interconnect string `json:"interconnect"`
	// LinkAssumed names what the GPU borrows of its link's measurements
	// (the H20's NVLink 4 figures are the H100's); "" when they were
	// measured on it. predict prints it with the link's own Assumed.
	LinkAssumed string `json:"link_assumed,omitempty"`
	// ScaleOut names the per-GPU network link of the usual server (an
	// RDMA entry of the interconnect catalog): what KV transfers between
	// servers cross (KVTransferPath). "" is the node network (TCP).
	ScaleOut string `json:"scale_out,omitempty"`
	// Nodes is how many servers one worker spans (AcrossNodes); 0 or 1 is
	// one server. Not a catalog fact: pricing sets it per deployment.
	Nodes  int    `json:"-"`
	Source string `json:"source"`
}

// MatmulShareUnmeasured is what AchievableMatmulShare assumes for a GPU
// that no public GEMM measurement covers: the median of the catalog's shares.
const MatmulShareUnmeasured = 0.80

// MemoryShareUnmeasured is what AchievableMemoryShare assumes for a GPU
// that no public bandwidth measurement covers: the median of the catalog's
// shares.
const MemoryShareUnmeasured = 0.88

// AchievableMemoryShare is g's MemoryShare, or MemoryShareUnmeasured.
func (g GPU) AchievableMemoryShare() float64 {
	if g.MemoryShare > 0 {
		return g.MemoryShare
	}
	return MemoryShareUnmeasured
}

// AchievableMatmulShare is the share of GEMMTFLOPS(q) a large GEMM
// reaches on g: FP8MatmulShare for FP8 where measured, else MatmulShare,
// else MatmulShareUnmeasured.
func (g GPU) AchievableMatmulShare(q Quantization) float64 {
	switch {
	case q == QuantFP8 && g.FP8TFLOPS > 0 && g.FP8MatmulShare > 0:
		return g.FP8MatmulShare
	case g.MatmulShare > 0:
		return g.MatmulShare
	}
	return MatmulShareUnmeasured
}

// Interconnect holds the facts that price tensor-parallel all-reduces and
// pipeline hand-offs between the GPUs of one server.
type Interconnect struct {
	Name string `json:"name"`
	// GBps is the line rate per GPU per direction in GB/s.
	GBps float64 `json:"gbps"`
	// Efficiency is the share of GBps a large transfer reaches on a link
	// whose BusGBps is not measured (RDMA NICs, the node network, AMD's
	// bridges); zero where BusGBps is measured (see AchievableBps).
	Efficiency float64 `json:"efficiency,omitzero"`
	// GraphAllReduceUs and EagerAllReduceUs are the latency of one small
	// (16 KB) all-reduce at TP 2, 4 and 8, in µs, as a serving engine runs
	// it: captured in a CUDA graph (vLLM's custom all-reduce in a decode
	// step's graph), or launched from the host (enforce-eager workers, and
	// steps larger than the captured graphs). See AllReduceUs.
	GraphAllReduceUs [3]float64 `json:"graph_all_reduce_us"`
	EagerAllReduceUs [3]float64 `json:"eager_all_reduce_us"`
	// BusGBps is the bus bandwidth (nccl-tests' busbw) a large all-reduce
	// (hundreds of MB, as a prefill chunk's) reaches at TP 2, 4 and 8, in
	// GB/s. It depends on the TP: 8 GPUs on an NVSwitch near its line rate
	// (as in-switch reduction gives), a TP group of MI300Xs uses only the
	// TP−1 links between its members, and PCIe GPUs share a root complex.
	// The zero value means not measured: GBps × Efficiency at every TP.
	BusGBps [3]float64 `json:"bus_gbps,omitzero"`
	// GraphGrowthUs is how much longer than a 16 KB one an all-reduce of
	// GraphGrowthBytes[i] bytes takes in a CUDA graph at TP 2, 4 and 8, in
	// µs: vLLM's measured curve, whose switch from its one-shot to its
	// two-shot kernel a decode batch's messages (hundreds of KB to a few
	// MB) cross, and which latency plus bytes at the large-message bus
	// bandwidth misses by up to half. Empty where not measured.
	GraphGrowthBytes []float64    `json:"graph_growth_bytes,omitempty"`
	GraphGrowthUs    [3][]float64 `json:"graph_growth_us,omitzero"`
	// P2PUs is the latency of one small point-to-point send (a pipeline hand-off), in µs.
	P2PUs float64 `json:"p2p_us"`
	// Assumed names the figures no public measurement gives, and what the
	// measured ones presume of the host, in a few words ("" when nothing
	// is assumed); predict prints it beside the collectives it prices.
	Assumed string `json:"assumed,omitempty"`
	Source  string `json:"source"`
}

// AllReduceUs is the latency of one small all-reduce over tp GPUs, in µs,
// in a CUDA graph or eager: the catalog's TP2/4/8 figures, interpolated
// in log2(tp) between them and held beyond.
func (ic Interconnect) AllReduceUs(tp int, graph bool) float64 {
	if graph {
		return atTP(ic.GraphAllReduceUs, tp)
	}
	return atTP(ic.EagerAllReduceUs, tp)
}

// AllReduceBps is the bus bandwidth a large all-reduce over tp GPUs
// reaches, in bytes/s: BusGBps read as AllReduceUs reads its figures, or
// AchievableBps where BusGBps is not measured.
func (ic Interconnect) AllReduceBps(tp int) float64 {
	if ic.BusGBps[0] > 0 {
		return atTP(ic.BusGBps, tp) * 1e9
	}
	return ic.AchievableBps()
}

// atTP reads a figure given at TP 2, 4 and 8 at tp: interpolated in
// log2(tp) between them, held beyond them.
func atTP(v [3]float64, tp int) float64 {
	x := math.Log2(float64(max(tp, 2))) - 1 // 0 at TP2, 1 at TP4, 2 at TP8
	if x >= 2 {
		return v[2]
	}
	i := int(x)
	f := x - float64(i)
	return v[i] + f*(v[i+1]-v[i])
}

// DeviceMemoryBytes is the memory the driver reports, in bytes: what the
// engines' default rules read (SGLang asks nvidia-smi).
func (g GPU) DeviceMemoryBytes() float64 {
	if g.MemoryMiB > 0 {
		return g.MemoryMiB * (1 << 20)
	}
	return g.MemoryGB * 1e9
}

// CUDAMemoryBytes is the memory an engine sizes its KV cache from, in
// bytes: what CUDA (or HIP) reports where measured (CUDAMemoryMiB); else
// on an NVIDIA GPU nvidia-smi's figure less DriverReservedMiB, and
// otherwise the driver's figure.
func (g GPU) CUDAMemoryBytes() float64 {
	switch {
	case g.CUDAMemoryMiB > 0:
		return g.CUDAMemoryMiB * (1 << 20)
	case g.MemoryMiB > 0 && g.Class() != "AMD":
		return (g.MemoryMiB - DriverReservedMiB) * (1 << 20)
	}
	return g.DeviceMemoryBytes()
}

// DriverReservedMiB is how much less than nvidia-smi's total CUDA reports
// on an NVIDIA GPU whose engines' logs have not printed it: the middle of
// the three measured, 468 MiB on an H100, 582 on an L40S and 606 on an
// H200 (GPU.CUDAMemoryMiB).
const DriverReservedMiB = 582

// AchievableBps is the bandwidth a large point-to-point transfer (a KV
// cache, a pipeline hand-off) reaches, in bytes/s: TP2's measured bus
// bandwidth where there is one (two GPUs exchanging, the nearest measured
// figure to one sending to the other), else GBps × Efficiency.
func (ic Interconnect) AchievableBps() float64 {
	if ic.BusGBps[0] > 0 {
		return ic.BusGBps[0] * 1e9
	}
	return ic.GBps * 1e9 * ic.Efficiency
}

// interconnects is the interconnect catalog. Line rates from the vendors'
// spec sheets; latencies, bus bandwidths and efficiencies from the public
// measurements named in Source, and the figures none gives named in
// Assumed (docs/measurements/collectives.md holds the measurements). A
// step's all-reduces cost their latency plus their bytes at the bus
// bandwidth, or in a CUDA graph their measured curve (GraphGrowthUs):
// nothing else is added per collective (a fitted group's
// per-step time beyond the cost model stays that group's own,
// Entry.Unexplained).
var interconnects = []Interconnect{
	{Name: "NVLink4", GBps: 450, GraphAllReduceUs: [3]float64{4.5, 4.9, 5.5}, EagerAllReduceUs: [3]float64{22.4, 23.3, 23.5}, BusGBps: [3]float64{318, 350, 445}, P2PUs: 8,
		GraphGrowthBytes: vllmGraphGrowthBytes,
		GraphGrowthUs:    [3][]float64{{0, 0.03, 0.26, 0.69, 1.83, 3.85, 7.89, 15.75}, {0, 0.40, 0.97, 2.35, 6.57, 7.93, 13.77, 25.42}, {0, 1.10, 2.55, 5.48, 6.68, 9.66, 14.08, 25.50}},
		Source: "NVLink 4 (H100/H200/H20 SXM, NVSwitch): 900 GB/s bidirectional. NVIDIA/nccl-tests#212 (NCCL maintainer): NCCL's rings reach ~370 of 450 GB/s bus bandwidth (context; the entry uses the per-TP figures below). " +
			"All-reduce latency: vLLM 0.20.0's custom all-reduce, BF16, 16 KB, H100 SXM: 4.45/4.91/5.52 µs at TP2/4/8 captured in CUDA graphs, 22.4/23.3/23.5 µs eager " +
			"(ai-dynamo/aiconfigurator campaign_checkpoints/h100_sxm/custom_allreduce_perf.txt @67f90e7, its collector's microbenchmark); " +
			"H200 within 0.2 µs of it (campaign_checkpoints/h200_sxm/custom_allreduce_perf.txt @77a06bf: 4.55/4.92/5.71 graph, 20.6/21.3/22.1 eager); H20 not measured, taken as H100 (same NVLink 4 and NVSwitch). " +
			"Large all-reduce bus bandwidth: nccl-tests all_reduce_perf, NCCL 2.29.2, half, 512 MiB, 8× H100 SXM: 318/350/445 GB/s at TP2/4/8 (near the line rate at TP8, as NVLink SHARP gives; aiconfigurator systems/data/h100_sxm/comm/nccl/2.29.2/nccl_perf.parquet @095f58a); H200 315/348/461 (h200_sxm/comm/nccl/2.29.2). " +
			"Growth with the message size in a graph: vLLM 0.24.0's custom all-reduce on 8× H100 SXM, 16 KB to 4 MB (h100_sxm/comm/vllm/0.24.0/custom_allreduce_perf.parquet, graph rows, less the 16 KB row); H200 within 1 µs to 1 MB"},
	{Name: "NVLink4-400", GBps: 200, GraphAllReduceUs: [3]float64{4.5, 4.9, 5.5}, EagerAllReduceUs: [3]float64{22.4, 23.3, 23.5}, BusGBps: [3]float64{141, 156, 215}, P2PUs: 8,
		Assumed: "the latencies (the H100's NVLink 4 measurements) and the bus bandwidth at TP2 and TP4 (the H100's × 200/450)",
		Source: "NVLink 4 cut to 400 GB/s bidirectional (H800 SXM, fixtures/corpus/CATALOG-NEEDS-c.md). Bus bandwidth at TP8: 215 GB/s, nccl-tests all_reduce_perf on 8× H800 (NVIDIA/nccl#1374, 2024-07-24, NCCL's default algorithm; message size not stated). " +
			"No measurement of its small-message latency or of TP2 and TP4 found: the latencies are the H100's (see NVLink4), the TP2 and TP4 bus bandwidths the H100's × 200/450 (DeepSeek measures about 160 GB/s one way on the H800's NVLink, deepseek-ai/DeepEP docs)"},
	{Name: "NVLink3", GBps: 300, GraphAllReduceUs: [3]float64{5.5, 5.9, 6.9}, EagerAllReduceUs: [3]float64{46.0, 45.5, 46.5}, BusGBps: [3]float64{193, 217, 222}, P2PUs: 10,
		GraphGrowthBytes: vllmGraphGrowthBytes,
		GraphGrowthUs:    [3][]float64{{0, 0.16, 0.40, 1.23, 2.65, 5.36, 9.84, 19.90}, {0, 0.57, 1.78, 3.91, 8.55, 12.34, 20.05, 35.48}, {0, 1.89, 4.81, 10.59, 12.32, 15.17, 21.39, 38.83}},
		Source: "NVLink 3 (A100 SXM): 600 GB/s bidirectional. NVIDIA/nccl-tests#178: all_reduce_perf bus bandwidth 208 GB/s on an A100 NVLink pair (context; the entry uses the per-TP figures below). " +
			"All-reduce latency: vLLM 0.20.0's custom all-reduce, BF16, 16 KB, A100-SXM4-80GB: 5.50/5.93/6.95 µs at TP2/4/8 in CUDA graphs, 46.0/45.5/46.5 µs eager " +
			"(ai-dynamo/aiconfigurator campaign_checkpoints/a100_sxm/custom_allreduce_perf.txt @563b2c4). " +
			"Large all-reduce bus bandwidth: nccl-tests all_reduce_perf, NCCL 2.27.3, half, 512 MiB, 8× A100 SXM: 193/217/222 GB/s at TP2/4/8 (aiconfigurator systems/data/a100_sxm/comm/nccl/2.27.3/nccl_perf.parquet @095f58a). " +
			"Growth with the message size in a graph: vLLM 0.14.0's custom all-reduce on 8× A100 SXM, 16 KB to 4 MB (a100_sxm/comm/vllm/0.14.0/custom_allreduce_perf.parquet, graph rows, less the 16 KB row)"},
	{Name: "NVLink5", GBps: 900, GraphAllReduceUs: [3]float64{7.4, 7.5, 8.3}, EagerAllReduceUs: [3]float64{19.4, 20.5, 20.0}, BusGBps: [3]float64{534, 634, 704}, P2PUs: 7,
		GraphGrowthBytes: vllmGraphGrowthBytes,
		GraphGrowthUs:    [3][]float64{{0, 0, 0.30, 0.56, 2.34, 6.02, 18.24, 26.57}, {0, 0.04, 0.70, 1.27, 10.66, 11.06, 16.40, 22.60}, {0, 0.57, 1.29, 17.73, 18.08, 9.10, 12.65, 18.24}},
		Source: "NVLink 5 (B200 HGX): 1.8 TB/s bidirectional. " +
			"All-reduce latency: vLLM 0.20.0's custom all-reduce, BF16, 16 KB, B200: 7.37/7.45/8.28 µs at TP2/4/8 in CUDA graphs, 19.4/20.5/20.0 µs eager " +
			"(ai-dynamo/aiconfigurator campaign_checkpoints/b200_sxm/custom_allreduce_perf.txt @019f1a1). " +
			"Large all-reduce bus bandwidth: nccl-tests all_reduce_perf, NCCL 2.29.2, half, 512 MiB, 8× B200: 534/634/704 GB/s at TP2/4/8 (aiconfigurator systems/data/b200_sxm/comm/nccl/2.29.2/nccl_perf.parquet @095f58a; NCCL 2.27.3–2.28.9 within 3%), " +
			"78% of the line rate at TP8; larger messages reach more (NVIDIA/nccl#1807: \"830+\" GB/s on 8× B200). " +
			"Growth with the message size in a graph: vLLM 0.24.0's all-reduce on 8× B200, 16 KB to 4 MB (b200_sxm/comm/vllm/0.24.0/custom_allreduce_perf.parquet, graph rows, less the 16 KB row; vLLM 0.19.0 within 1 µs to 2 MB). " +
			"vLLM's dispatch between its kernels by size shows: at TP4 a jump to 18 µs at 512 KB, and at TP8 26 µs at 256 and 512 KB but 17 µs at 1 MB, a dip the curve keeps"},
	{Name: "PCIe5", GBps: 64, GraphAllReduceUs: [3]float64{5.1, 14.9, 27.5}, EagerAllReduceUs: [3]float64{21.0, 30.7, 30.6}, BusGBps: [3]float64{38.6, 26.4, 24.7}, P2PUs: 15,
		Assumed: "peer-to-peer between the GPUs (without it, as on many cloud hosts, NCCL goes through host memory: 39 µs a 10 KB all-reduce at TP2, sgl-project/sglang#39605)",
		Source: "PCIe Gen5 x16: 64 GB/s per direction. vLLM runs its custom all-reduce over peer-to-peer PCIe at TP2 and NCCL beyond (custom_all_reduce.py disables it for more than two PCIe-only GPUs, vllm-project/vllm @00d618a). " +
			"All-reduce latency: vLLM 0.24.0, BF16, 16 KB, 8× RTX PRO 6000 Blackwell Server (PCIe Gen5 x16): 5.06/14.85/27.52 µs at TP2/4/8 in CUDA graphs, 20.97/30.72/30.57 µs eager (ai-dynamo/aiconfigurator systems/data/rtx_pro_6000_server/comm/vllm/0.24.0/custom_allreduce_perf.parquet @095f58a). " +
			"Large all-reduce bus bandwidth: nccl-tests all_reduce_perf, NCCL 2.29.2, half, 512 MiB, the same host: 38.6/26.4/24.7 GB/s at TP2/4/8, 60/41/39% of the line rate as the GPUs share the root complex (rtx_pro_6000_server/comm/nccl/2.29.2; NVIDIA/nccl#1639: 35 and 28 GB/s on 4 and 8 RTX 5090s). " +
			"vLLM 0.19.0 on the same host measures 20.55 µs at TP2 in a graph (rtx_pro_6000_server/comm/vllm/0.19.0): that release did not take the peer-to-peer path there"},
	{Name: "PCIe4", GBps: 32, GraphAllReduceUs: [3]float64{6.2, 17.5, 27.4}, EagerAllReduceUs: [3]float64{68.9, 56.0, 61.1}, BusGBps: [3]float64{20.1, 13.2, 12.4}, P2PUs: 20,
		Assumed: "peer-to-peer between the GPUs (without it, as on many cloud hosts, NCCL goes through host memory: 39 µs a 10 KB all-reduce at TP2, sgl-project/sglang#39605); the bus bandwidth at TP4 and TP8 (the Gen5 host's shares of the line rate)",
		Source: "PCIe Gen4 x16: 32 GB/s per direction; vLLM's custom all-reduce at TP2 and NCCL beyond, as on Gen5. " +
			"All-reduce latency: vLLM 0.14.0, BF16, 16 KB, 8× L40S (PCIe 4.0): 6.22/17.51/27.37 µs at TP2/4/8 in CUDA graphs, 68.86/55.95/61.11 µs eager (ai-dynamo/aiconfigurator systems/data/l40s/comm/vllm/0.14.0/custom_allreduce_perf.parquet @095f58a); " +
			"NCCL alone 7.54/16.13/41.68 µs (l40s/comm/nccl/2.27.3; NVIDIA/nccl#1530: 40–42 µs on eight PCIe Gen4 GPUs). " +
			"Large all-reduce bus bandwidth: 20.1 GB/s at TP2 on that host (nccl-tests, NCCL 2.27.3, half, 512 MiB: 63% of the line rate); it reaches only 5.2 and 1.4 GB/s at TP4 and TP8 (its GPUs do not all reach each other peer to peer), so TP4 and TP8 take the Gen5 host's 41% and 39% of the line rate. " +
			"These are hosts whose GPUs reach each other peer to peer; without it (many cloud VMs, GeForce cards) vLLM turns its custom all-reduce off and NCCL goes through host memory: 39 µs for 10 KB and 1.9 GB/s for 20 MB on 2× RTX 5070 Ti, PCIe 4.0 (sgl-project/sglang#39605), not what this entry prices"},
	{Name: "PCIe3", GBps: 16, GraphAllReduceUs: [3]float64{14.9, 19.2, 54}, EagerAllReduceUs: [3]float64{14.9, 19.2, 54}, BusGBps: [3]float64{7.1, 9.4, 8.8}, P2PUs: 25,
		Assumed: "the TP8 figures (no 8-GPU PCIe 3.0 measurement: 8 RTX 3090s' 8-byte latency, NVIDIA/nccl#1439, and the TP4 bus bandwidth × the PCIe 5.0 host's TP8/TP4 ratio)",
		Source: "PCIe Gen3 x16 (V100 PCIe): 16 GB/s per direction. vLLM's custom all-reduce does not run there (off without peer-to-peer and for more than two PCIe GPUs), so every all-reduce is NCCL's, the same in a CUDA graph as eager. " +
			"TP4: nccl-tests all_reduce_perf, NCCL 2.8.3, float, 4× Tesla V100-PCIE-32GB without NVLink: 19.15 µs at 16 KB, bus bandwidth 9.40 GB/s at 128 MB (University of Sheffield HPC docs, rcgsheffield/sheffield_hpc bessemer/software/libs/cuda.rst @e689d10; NCCL 2.4.2 on the same node 19.62 µs and 11.18 GB/s). " +
			"TP2: the same test, NCCL 2.21.5, 2× Tesla V100-PCIE-16GB: 10.29 µs at 1 KB and 29.63 µs at 64 KB (16 KB read between them: 14.9 µs), 7.09 GB/s at 128 MB, through host memory (the host's NCCL log shows its GPUs joined via SHM) (Enizaksoy/lab-baremetal-gpu-cluster SETUP_GUIDE_STEP_BY_STEP.md @02ee25e). " +
			"TP8: 54 µs, the slower of the 8-GPU PCIe measurements found (NVIDIA/nccl#1439, 8 GPUs at 8 B); bus bandwidth the TP4 figure × 24.7/26.4 (the PCIe 5.0 host's TP8 over TP4)"},
	{Name: "InfinityFabricMesh", GBps: 64, GraphAllReduceUs: [3]float64{7.3, 7.3, 7.3}, EagerAllReduceUs: [3]float64{17.2, 18.2, 16.2}, BusGBps: [3]float64{45.8, 132.2, 275.7}, P2PUs: 15,
		Assumed: "the latency in a graph (a QuickReduce table's baseline column read as vLLM's custom all-reduce, measured at TP4 only)",
		Source: "AMD Infinity Fabric on 8× MI300X: seven xGMI links of 64 GB/s per direction, one to each peer, so a TP group of n GPUs all-reduces over the n−1 links between its members. " +
			"All-reduce latency in a CUDA graph: vLLM's custom all-reduce, 16 KB, TP4: 7.26 µs (the baseline column of the QuickReduce tables in vllm-project/vllm#19744 and sgl-project/sglang#6619), taken at TP2 and TP8. " +
			"Eager: RCCL 2.20.5, 32 KB, 8× MI300X: 17.15/18.17/16.22 µs at TP2/4/8 (mk1-project/quickreduce README @910e892); rccl-tests at 16 KB on 8× MI300X: 15.47 µs (hisohara/ai-scripts training/01_rccl-smoketest/README.md @0780bb3). " +
			"Large all-reduce bus bandwidth: RCCL at 64 MiB 45.8/132.2/275.7 GB/s at TP2/4/8 (from mk1-project/quickreduce's table: 72% of one link at TP2, 69% of three at TP4); rccl-tests at 1–8 GiB 314–316 GB/s at TP8 (hisohara/ai-scripts: 70% of seven links)"},
	{Name: "InfinityFabric", GBps: 46, GraphAllReduceUs: [3]float64{25, 25, 25}, EagerAllReduceUs: [3]float64{25, 25, 25}, BusGBps: [3]float64{35, 101, 12.4}, P2PUs: 15,
		Assumed: "every all-reduce figure: no MI210 or MI100 all-reduce measurement found; the latency an MI250X's, the bus bandwidths a peer copy's scaled as on MI300X",
		Source: "AMD Infinity Fabric Link bridges (MI100, MI210): a hive of four GPUs in a full mesh, one 16-wide link of 23 GT/s (MI100; 46 GB/s per direction) or 25 GT/s (MI210) between each pair; an 8-GPU server is two hives joined through PCIe and the CPUs (AMD's MI100 and MI250 architecture pages, rocm.docs.amd.com reference/gpu-arch). " +
			"vLLM's custom all-reduce is off on these GPUs (ROCm/vllm#247: garbage output on MI250, gfx90a), so every all-reduce is RCCL's, the same in a graph as eager. " +
			"Latency: 25 µs, RCCL all_reduce_perf at 8–128 B on 16 MI250X dies (gfx90a, the MI210's die; ROCm/rccl#929, before its one-shot kernel), taken at every TP. " +
			"Bus bandwidth: TP2 35 GB/s, the in-hive peer copy measured on 8× MI100 (about 70 GB/s both ways against AMD's 92, ROCm/legacy-rocm-build#2499); TP4 three such links at MI300X's measured TP4/TP2 ratio per link (InfinityFabricMesh: 132.2 / (3 × 45.8)); TP8 across the two hives at the PCIe 4.0 entry's TP8 figure"},
	{Name: "RDMA400", GBps: 50, Efficiency: KVRDMAEfficiency, GraphAllReduceUs: [3]float64{56, 56, 56}, EagerAllReduceUs: [3]float64{56, 56, 56}, P2PUs: 45,
		Source: "One 400 Gb/s RDMA NIC per GPU (InfiniBand NDR or RoCE): NVIDIA DGX H100/H200 and DGX B200 datasheets, 8× single-port ConnectX-7 400 Gb/s for the compute fabric; Azure ND MI300X v5 and ND H100 v5, 8× 400 Gb/s InfiniBand per VM (one per GPU). " +
			"H20: no NVIDIA reference server published; taken as HGX H100's. Efficiency 75% measured for KV transfers (Mooncake's vLLM connector, KVRDMAEfficiency). " +
			"All-reduce latency over two servers (16 GPUs), not yet used: a worker spanning servers is priced on the node network entry, which assumes no RDMA: " +
			"56.25 µs at 16 KB over 400G RoCE (rccl-tests, 2 × 8 MI355X, hisohara/ai-scripts training/01_rccl-smoketest/README.md @0780bb3), 47.6 µs at 8 B over InfiniBand NDR (nccl-tests, 2 × 8 H20, NVIDIA/nccl#1244)"},
	{Name: "RDMA200", GBps: 25, Efficiency: KVRDMAEfficiency, GraphAllReduceUs: [3]float64{93, 93, 93}, EagerAllReduceUs: [3]float64{93, 93, 93}, P2PUs: 45,
		Source: "One 200 Gb/s RDMA NIC per GPU: NVIDIA DGX A100 datasheet, 8× single-port ConnectX-6 200 Gb/s HDR InfiniBand; H800: Mooncake's two H800 servers, 8× ConnectX-7 RoCE, about 200 GB/s in all (kvcache-ai/Mooncake vllm-v1-pd-performance.md @3d0748c). " +
			"Efficiency 75% measured there for KV transfers (KVRDMAEfficiency). Only KV transfers are priced on it, as RDMA400. " +
			"All-reduce latency over two servers, not yet used: 93.12 µs at 8 B between two DGX A100s with NCCL's ring forced (nccl-tests, NVIDIA/nccl#812)"},
	{Name: NodeNetwork, GBps: 3.125, Efficiency: 0.6, GraphAllReduceUs: [3]float64{85, 85, 85}, EagerAllReduceUs: [3]float64{85, 85, 85}, P2PUs: 45,
		Assumed: "the NIC's speed and the latencies (a TCP-sockets broadcast, doubled)",
		Source: "The node network when a worker's GPUs span servers, with nothing known of it: NCCL over TCP sockets (its fallback without InfiniBand/RoCE) on a 25 GbE NIC (3.125 GB/s per direction; the NIC speed is assumed, a commodity data-centre default). " +
			"Efficiency: NVIDIA/nccl#209, NCCL over TCP reaches no more than 60% of wire speed on 32 Gbps networks even for large messages. " +
			"Latency: NVIDIA/nccl-tests#82, broadcast_perf over sockets (NCCL_IB_DISABLE=1) between two nodes of one V100 each takes 38–46 µs at 8 B; a two-rank all-reduce (reduce-scatter then all-gather) crosses the network twice, so ~85 µs is assumed in either mode, and a point-to-point hand-off ~45 µs. " +
			"Container overlay networks (Kubernetes pods) and slower NICs are slower still; RDMA (InfiniBand/RoCE, ~12 GB/s per 100G NIC: NVIDIA/nccl-tests#119) is much faster"},
}

// vllmGraphGrowthBytes are the message sizes of the collector's vLLM
// tables that GraphGrowthUs is read at, 16 KB to 4 MB.
var vllmGraphGrowthBytes = []float64{16 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20}

// NodeNetwork is the interconnect catalog's entry for the network between
// servers: what a worker whose tensor-parallel group or pipeline spans
// more than one node all-reduces and hands off over (GPU.AcrossNodes).
const NodeNetwork = "Ethernet"

// LookupInterconnect finds an interconnect by name, in any case.
func LookupInterconnect(name string) (Interconnect, error) {
	for _, ic := range interconnects {
		if strings.EqualFold(ic.Name, name) {
			return ic, nil
		}
	}
	return Interconnect{}, fmt.Errorf("model: unknown interconnect %q", name)
}

// Interconnects returns the interconnect catalog.
func Interconnects() []Interconnect { return append([]Interconnect(nil), interconnects...) }

// Link is the GPU's interconnect; an unknown name prices as PCIe Gen4.
func (g GPU) Link() Interconnect {
	if ic, err := LookupInterconnect(g.Interconnect); err == nil {
		return ic
	}
	ic, _ := LookupInterconnect("PCIe4")
	return ic
}

// Class is the kind of GPU and link a calibration's band coverage is judged
// by (fit --cv): "PCIe", "NVLink Ampere", "NVLink Hopper", "NVLink
// Blackwell" or "AMD"; "other" for a link the catalog does not classify.
func (g GPU) Class() string {
	switch ic := g.Link().Name; {
	case strings.HasPrefix(ic, "InfinityFabric"):
		return "AMD"
	case strings.HasPrefix(ic, "PCIe"):
		return "PCIe"
	case ic == "NVLink3":
		return "NVLink Ampere"
	case strings.HasPrefix(ic, "NVLink4"):
		return "NVLink Hopper"
	case ic == "NVLink5":
		return "NVLink Blackwell"
	}
	return "other"
}

// AcrossNodes is g as a worker spanning nodes servers sees it (Nodes); on
// one node (nodes ≤ 1) g itself.
func (g GPU) AcrossNodes(nodes int) GPU {
	g.Nodes = 0
	if nodes > 1 {
		g.Nodes = nodes
	}
	return g
}

// TPLink is the link a worker's tensor-parallel all-reduces cross when it
// runs stages pipeline stages: the node network when its GPUs span more
// servers than it has stages (a TP group itself crosses servers; the
// slowest hop bounds a ring), else the in-server link. A TP4PP2 worker on
// two servers keeps each stage's TP on one server.
func (g GPU) TPLink(stages int) Interconnect {
	if g.Nodes > max(stages, 1) {
		return nodeNetwork()
	}
	return g.Link()
}

// HandoffLink is the link pipeline hand-offs cross: the node network when
// the worker spans servers, else the in-server link.
func (g GPU) HandoffLink() Interconnect {
	if g.Nodes > 1 {
		return nodeNetwork()
	}
	return g.Link()
}

func nodeNetwork() Interconnect {
	ic, _ := LookupInterconnect(NodeNetwork)
	return ic
}

// gpus is the GPU catalog. Figures from the vendors' public spec sheets and
// datasheets named in Source; link bandwidth is per direction.
var gpus = []GPU{
	{Name: "H20", Aliases: []string{"H20-96GB", "NVIDIA H20"}, MemoryGB: 96, MemoryTBps: 4.0, TFLOPS: 148, FP8TFLOPS: 296, MemoryMiB: 97871, MatmulShare: 0.96, L2MB: 60, Interconnect: "NVLink4", LinkAssumed: "its NVLink 4 collectives measured on H100s, none on an H20", ScaleOut: "RDMA400",
		Source: "NVIDIA H20 product brief: 96 GB HBM3, 4.0 TB/s, 148 TFLOPS BF16 dense, NVLink 900 GB/s. Device memory: nvidia-smi on an H20: 97871MiB. Matmul: torch.mm BF16, best of square 1024–10240, 142.25 TFLOPS (zzc0721/torch-performance-test-data database.md, 2025-10-20): 0.96 of peak. L2: 60 MB (third-party spec listings; NVIDIA's product brief omits it)."},
	{Name: "L40S", Aliases: []string{"NVIDIA L40S", "NVIDIA_L40S"}, MemoryGB: 48, MemoryTBps: 0.864, TFLOPS: 362, FP8TFLOPS: 733, MemoryMiB: 46068, CUDAMemoryMiB: 45486, MatmulShare: 0.74, MemoryShare: 0.96, L2MB: 96, Interconnect: "PCIe4",
		Source: "NVIDIA L40S datasheet: 48 GB GDDR6, 864 GB/s, 362 TFLOPS BF16 dense (733 sparse), PCIe Gen4 x16. Device memory: nvidia-smi on an L40S: 46068MiB; CUDA 44.42 GiB (vLLM 0.10.2's log, free memory 43.93 of 44.42 GiB, Qwen3-235B-A22B-FP8 on 8× L40S). Matmul: torch.mm BF16, best of square sizes, 269.15 TFLOPS (zzc0721/torch-performance-test-data issue #43, 2025-10-05): 0.74. Bandwidth: STREAM triad 0.831 TB/s on an L40, the same 864 GB/s GDDR6 (RRZE-HPC/gpu-benches gpu-stream/l40.txt): 0.96. L2: 96 MB (NVIDIA Ada GPU architecture whitepaper, AD102)."},
	{Name: "V100-PCIe-16GB", Aliases: []string{"V100", "V100-PCIe", "NVIDIA V100 (PCIe 16GB)", "Tesla V100-PCIE-16GB"}, MemoryGB: 16, MemoryTBps: 0.9, TFLOPS: 112, MemoryMiB: 16160, MemoryShare: 0.94, L2MB: 6, Interconnect: "PCIe3",
		Source: "NVIDIA V100 datasheet (PCIe): 16 GB HBM2, 900 GB/s, 112 TFLOPS FP16 tensor, PCIe Gen3 x16. Device memory: nvidia-smi on a Tesla V100-PCIE-16GB: 16160MiB. Bandwidth: BabelStream triad 0.846 TB/s, copy 0.812 (kaanolgu/BabelStream docs/instructions.md): 0.94. L2: 6 MB (NVIDIA Volta architecture whitepaper)."},
	{Name: "MI210", Aliases: []string{"AMD MI210", "Instinct MI210"}, MemoryGB: 64, MemoryTBps: 1.6, TFLOPS: 181, MemoryMiB: 65536, MatmulShare: 0.72, MemoryShare: 0.77, L2MB: 8, Interconnect: "InfinityFabric",
		Source: "AMD Instinct MI210 spec: 64 GB HBM2e, 1.6 TB/s, 181 TFLOPS FP16/BF16, Infinity Fabric up to 300 GB/s peer. Device memory: 64 GiB, assumed binary as rocm-smi reports the MI300X's. Matmul: torch.mm BF16 10240³, 130.83 TFLOPS on ROCm 7.2 (zzc0721/torch-performance-test-data issue #195, 2026-08-07): 0.72. Bandwidth: STREAM triad 1.23 TB/s, scale 1.41 (RRZE-HPC/gpu-benches gpu-stream/mi210.txt; AMD's BabelStream acceptance floor triad 1.115, ROCm/system-acceptance-docs docs/gpus/mi210.md): 0.77. L2: 8 MB (AMD CDNA 2 architecture whitepaper, per graphics compute die)."},
	{Name: "H100-PCIe", Aliases: []string{"H100 PCIe", "NVIDIA H100 (PCIe 80GB)", "H100-PCIe-80GB"}, MemoryGB: 80, MemoryTBps: 2.0, TFLOPS: 756, FP8TFLOPS: 1513, MemoryMiB: 81559, CUDAMemoryMiB: 81091, MatmulShare: 0.66, MemoryShare: 0.92, L2MB: 50, Interconnect: "PCIe5",
		Source: "NVIDIA H100 datasheet (PCIe): 80 GB HBM2e, 2.0 TB/s, 756 TFLOPS BF16 dense, PCIe Gen5 x16. Device memory: 81559MiB, assumed as nvidia-smi reports the H100 SXM and H800, and CUDA's 79.19 GiB taken from the H100 SXM. Matmul: torch.mm BF16 4096³, 495.93 TFLOPS (zzc0721/torch-performance-test-data issue #95, 2025-12-14; 350 W power limit): 0.66. Bandwidth: STREAM triad 1.83 TB/s, read 1.94 (RRZE-HPC/gpu-benches gpu-stream/h100_pcie.txt): 0.92. L2: 50 MB (NVIDIA H100 Tensor Core GPU architecture whitepaper)."},
	{Name: "H100-SXM", Aliases: []string{"H100", "H100 SXM", "H100-SXM-80GB", "NVIDIA H100 80GB HBM3"}, MemoryGB: 80, MemoryTBps: 3.35, TFLOPS: 989, FP8TFLOPS: 1979, MemoryMiB: 81559, CUDAMemoryMiB: 81091, MatmulShare: 0.8, FP8MatmulShare: 0.71, MemoryShare: 0.89, L2MB: 50, Interconnect: "NVLink4", ScaleOut: "RDMA400",
		Source: "NVIDIA H100 datasheet (SXM): 80 GB HBM3, 3.35 TB/s, 989 TFLOPS BF16 dense, NVLink 900 GB/s. pyptx.dev/performance: a CUDA-event-timed D2D copy reaches 3.02–3.09 TB/s (90–92%). Device memory: nvidia-smi on an H100 80GB HBM3: 81559MiB; CUDA 79.19 GiB (vLLM 0.19.0's logs, free memory 78.68 of 79.19 GiB, llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs @d3121e0). Matmul: maximum achievable matmul FLOPS, BF16 794.5 TFLOPS (0.80), FP8 e4m3 1402.6 (0.71) (stas00/ml-engineering compute/accelerator/README.md, 2025-01-05; torch-performance-test-data: 797.5). Bandwidth: BabelStream triad 2.97 TB/s, copy 2.90 (Azure/AI-benchmarking-guide Azure_Results/ND_H100_v5_results.md): 0.89. L2: 50 MB (NVIDIA H100 Tensor Core GPU architecture whitepaper)."},
	{Name: "H200", Aliases: []string{"H200 SXM", "NVIDIA H200"}, MemoryGB: 141, MemoryTBps: 4.8, TFLOPS: 989, FP8TFLOPS: 1979, MemoryMiB: 143771, CUDAMemoryMiB: 143165, MatmulShare: 0.8, FP8MatmulShare: 0.73, MemoryShare: 0.86, L2MB: 60, Interconnect: "NVLink4", ScaleOut: "RDMA400",
		Source: "NVIDIA H200 datasheet (SXM): 141 GB HBM3e, 4.8 TB/s, 989 TFLOPS BF16 dense, NVLink 900 GB/s. Device memory: nvidia-smi on an H200: 143771MiB; CUDA 139.81 GiB (vLLM 0.10.2's log, 139.21 of 139.81 GiB free, Qwen3-Next-80B on 2× H200). Matmul: torch.mm BF16 790.29 TFLOPS (zzc0721/torch-performance-test-data issue #45, 2025-10-05): 0.80; FP8 e4m3 1453.4 (0.73) (stas00/ml-engineering MAMF table, 2025-07-08). Bandwidth: BabelStream triad 4.15 TB/s, copy 4.01 (Azure/AI-benchmarking-guide Azure_Results/ND_H200_v5_results.md): 0.86. Corroborated on an H200 by capsim (docs/measurements/gpu_kernels_h200.json, 2026-11-28, torch 2.11): D2D copy 4.29 TB/s (0.89), BF16 8192³ matmul 789.5 TFLOPS (0.80). L2: 60 MiB, as the CUDA device properties report it on that H200 (the whole GH100 die's; the H100 SXM enables 50 MB)."},
	{Name: "A100-80GB", Aliases: []string{"A100", "A100 80GB", "A100-SXM4-80GB"}, MemoryGB: 80, MemoryTBps: 2.039, TFLOPS: 312, MemoryMiB: 81920, CUDAMemoryMiB: 81162, MatmulShare: 0.87, MemoryShare: 0.85, L2MB: 40, Interconnect: "NVLink3", ScaleOut: "RDMA200",
		Source: "NVIDIA A100 datasheet (SXM 80GB): 2,039 GB/s, 312 TFLOPS BF16 dense, NVLink 600 GB/s. Device memory: nvidia-smi on an A100-SXM4-80GB: 81920MiB; CUDA 79.26 GiB, from the pairs of utilizations in dennislee22's vLLM 0.10.1.1 logs (fixtures/corpus/b-dennislee-a100-qwen.md: (24.83 − 5.01) / 0.25 and (31.83 − 12.02) / 0.25 GiB; vllm-project/vllm#10533 prints 79.15). Matmul: maximum achievable matmul FLOPS, BF16 271.2 TFLOPS (stas00/ml-engineering compute/accelerator/README.md, 2025-01-04): 0.87. Bandwidth: BabelStream triad 1.70 TB/s (Azure/AI-benchmarking-guide Azure_Results/ND_A100_v4_results.md), STREAM triad 1.79 (RRZE-HPC/gpu-benches gpu-stream/a100_80.txt): 0.83–0.88. L2: 40 MB (NVIDIA A100 Tensor Core GPU architecture whitepaper)."},
	{Name: "A100-80GB-PCIe", Aliases: []string{"A100 PCIe 80GB", "A100-PCIe-80GB", "NVIDIA A100 80GB PCIe"}, MemoryGB: 80, MemoryTBps: 1.935, TFLOPS: 312, MemoryMiB: 81920, CUDAMemoryMiB: 81162, MatmulShare: 0.81, L2MB: 40, Interconnect: "PCIe4",
		Source: "NVIDIA A100 datasheet (PCIe 80GB): 1,935 GB/s, 312 TFLOPS BF16 dense, PCIe Gen4 x16 (NVLink bridge optional; fixtures/corpus/CATALOG-NEEDS-b.md). Device memory: 81920MiB, assumed as nvidia-smi reports the A100-SXM4-80GB, and CUDA's 79.26 GiB taken from it. Matmul: maximum achievable matmul FLOPS, A100 PCIe BF16 252.9 TFLOPS (stas00/ml-engineering MAMF table, 2025-01-04): 0.81. L2: 40 MB (NVIDIA A100 Tensor Core GPU architecture whitepaper)."},
	{Name: "A100-40GB", Aliases: []string{"A100 40GB", "A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"}, MemoryGB: 40, MemoryTBps: 1.555, TFLOPS: 312, MemoryMiB: 40960, MatmulShare: 0.87, MemoryShare: 0.88, L2MB: 40, Interconnect: "NVLink3", ScaleOut: "RDMA200",
		Source: "NVIDIA A100 datasheet (40GB): 1,555 GB/s, 312 TFLOPS BF16 dense, SXM4 NVLink 600 GB/s (form factor assumed SXM; fixtures/corpus/CATALOG-NEEDS-b.md). Device memory: nvidia-smi on an A100-SXM4-40GB: 40960MiB. Matmul: the A100 SXM's 271.2 TFLOPS BF16 (stas00/ml-engineering MAMF table; same tensor cores and clocks; an older torch 2.2 run on an 'A100 40GB' in torch-performance-test-data gives 0.79): 0.87. Bandwidth: BabelStream triad 1.37–1.38 TB/s on an A100-SXM4-40GB (argonne-lcf/ALCFBeginnersGuide polaris/02_profiling.md; RRZE-HPC/gpu-benches gpu-stream/a100_40.txt 1.375): 0.88. L2: 40 MB (NVIDIA A100 Tensor Core GPU architecture whitepaper)."},
	{Name: "H800", Aliases: []string{"NVIDIA H800", "H800 SXM", "H800-SXM"}, MemoryGB: 80, MemoryTBps: 3.35, TFLOPS: 989, FP8TFLOPS: 1979, MemoryMiB: 81559, CUDAMemoryMiB: 81091, MatmulShare: 0.8, MemoryShare: 0.89, L2MB: 50, Interconnect: "NVLink4-400", ScaleOut: "RDMA200",
		Source: "NVIDIA H800 SXM5 (export variant of H100 SXM): 80 GB HBM3, 3.35 TB/s, 989 TFLOPS BF16 dense; NVLink cut to 400 GB/s (fixtures/corpus/CATALOG-NEEDS-c.md, 'check'; its own interconnect entry). Device memory: nvidia-smi on an H800: 81559MiB, as on an H100 SXM, whose CUDA total (79.19 GiB) it is taken to share. Matmul: no public BF16 GEMM measurement of the H800 SXM found; the H100 SXM's 0.80 assumed (same tensor cores and clocks). Bandwidth: no public measurement of the H800 found; the H100 SXM's 0.89 assumed (the same 3.35 TB/s HBM3). L2: 50 MB (the H100's GH100 die)."},
	{Name: "MI300X", Aliases: []string{"AMD MI300X", "Instinct MI300X"}, MemoryGB: 192, MemoryTBps: 5.3, TFLOPS: 1307, FP8TFLOPS: 2615, MemoryMiB: 196288, CUDAMemoryMiB: 196588, MatmulShare: 0.54, FP8MatmulShare: 0.49, MemoryShare: 0.77, L2MB: 256, Interconnect: "InfinityFabricMesh", ScaleOut: "RDMA400",
		Source: "AMD Instinct MI300X data sheet: 192 GB HBM3, 5.3 TB/s, 1307 TFLOPS BF16 dense (2615 FP8), Infinity Fabric 7 × 128 GB/s (fixtures/corpus/CATALOG-NEEDS-c.md). Device memory: rocm-smi VRAM total on an MI300X: 205822885888 B; HIP reports 191.98 GiB to vLLM (its logs: free memory on device of 191.98 GiB, e.g. 191.46 of it on an idle card). Matmul: hipblaslt-bench BF16 708 TFLOPS (0.54), FP8 1273 (0.49) (AMD ROCm blog 'Measuring Max-Achievable FLOPs – Part 2', 2025-02-25; stock PyTorch on ROCm 6.3 reaches 668 BF16, stas00/ml-engineering). Bandwidth: BabelStream triad 4.09 TB/s, copy 4.11 (samuel-bohman/AI-benchmarking-guide Azure_Results/ND_MI300X_v5_results.md; RRZE-HPC/gpu-benches gpu-stream/mi300x.txt 4.00): 0.77. Last-level cache: 256 MB Infinity Cache (AMD CDNA 3 architecture whitepaper; 4 MB L2 per XCD in front of it)."},
	{Name: "MI100", Aliases: []string{"AMD MI100", "Instinct MI100"}, MemoryGB: 32, MemoryTBps: 1.23, TFLOPS: 92.3, MemoryMiB: 32768, MemoryShare: 0.8, L2MB: 8, Interconnect: "InfinityFabric",
		Source: "AMD Instinct MI100 data sheet: 32 GB HBM2, 1.23 TB/s, 92.3 TFLOPS BF16 matrix (184.6 FP16), Infinity Fabric Link 3 × 92 GB/s (fixtures/corpus/CATALOG-NEEDS-d.md, 'check'). Device memory: 32 GiB, assumed binary as rocm-smi reports the MI300X's. Bandwidth: STREAM triad 0.98 TB/s (RRZE-HPC/gpu-benches gpu-stream/mi100.txt; AMD acceptance floor 0.91, ROCm/system-acceptance-docs docs/gpus/mi100.md): 0.80. L2: 8 MB (AMD CDNA architecture whitepaper)."},
	{Name: "B200", Aliases: []string{"NVIDIA B200", "HGX B200"}, MemoryGB: 180, MemoryTBps: 8.0, TFLOPS: 2250, FP8TFLOPS: 4500, FP4TFLOPS: 9000, MemoryMiB: 183359, MatmulShare: 0.78, FP8MatmulShare: 0.76, MemoryShare: 0.84, L2MB: 126, Interconnect: "NVLink5", ScaleOut: "RDMA400",
		Source: "NVIDIA HGX B200 spec: 180 GB HBM3e per GPU, 8 TB/s, 2.25 PFLOPS BF16 dense, NVLink 1.8 TB/s. pyptx.dev/performance: cuBLAS BF16 GEMM 1,532–1,652 TFLOPS at 4096³–8192³ (68–73% of peak). Device memory: nvidia-smi on a B200: 183359MiB. Matmul: maximum achievable matmul FLOPS, BF16 1745 TFLOPS (0.78), FP8 e4m3 3432.5 (0.76) (stas00/ml-engineering compute/accelerator/README.md, 2025-07-07/09). Bandwidth: cub::DeviceTransform on a B200, nvbench counting every byte read and written, 2^28 elements: an add of two F16 arrays 6.72 TB/s, a unary F32 op 6.71 (NVIDIA/cccl PR #7391, 2026-01): 0.84. The driver reports a 7680-bit bus at 3996 MHz, a 7.67 TB/s peak (pytorch/ao PR #4002, 2026-03-05), so that is 87.6% of it; cccl's BabelStream kernels reach 89–93% of it at 2^28–2^32 elements (NVIDIA/cccl PR #9210, 2026-07-10), 0.85–0.89 of 8 TB/s. L2: 126 MB over its two dies (chipsandcheese.com, 'Nvidia's B200: Keeping the CUDA Juggernaut Rolling', measured)."},
	{Name: "L4", Aliases: []string{"NVIDIA L4"}, MemoryGB: 24, MemoryTBps: 0.3, TFLOPS: 121, FP8TFLOPS: 242, MemoryMiB: 23034, MatmulShare: 0.49, L2MB: 48, Interconnect: "PCIe4",
		Source: "NVIDIA L4 datasheet: 24 GB GDDR6, 300 GB/s, 121 TFLOPS BF16 dense (242 sparse), PCIe Gen4 x16. Device memory: nvidia-smi on an L4: 23034MiB. Matmul: torch.mm BF16 at 8192³ 59.4 TFLOPS (0.49; 70.9 at 2048³ in a short burst before the 72 W power limit bites) (zzc0721/torch-performance-test-data issue #120, 2026-01-12). L2: 48 MB (NVIDIA Ada GPU architecture whitepaper, AD104)."},
}

// LLM holds the architecture numbers of a dense transformer, from its Hugging Face config.json.
type LLM struct {
	Name         string  `json:"name"` // Hugging Face id, e.g. "Qwen/Qwen3-32B"
	Layers       int     `json:"layers"`
	Hidden       int     `json:"hidden"`
	Heads        int     `json:"heads"`
	KVHeads      int     `json:"kv_heads"`
	HeadDim      int     `json:"head_dim"`
	Intermediate int     `json:"intermediate"`
	Vocab        int     `json:"vocab"`
	Params       float64 `json:"params"` // total parameters, embeddings included
	TiedEmbed    bool    `json:"tied_embeddings"`
	// MaxContext is the model's native context length in tokens.
	MaxContext int `json:"max_context"`
	// Quant is the checkpoint's quantization: its config's
	// quantization_config, or a quantized checkpoint's name ("-FP8", "-AWQ", …).
	Quant Quantization `json:"quant,omitempty"`
	// KVCacheBytes is the size of one cached key or value element; 0 means
	// 2 (BF16). LookupLLM sets 1 for NVIDIA's FP8 and FP4 checkpoints (see
	// fp8KVCache).
	KVCacheBytes float64 `json:"kv_cache_bytes,omitempty"`
	// Experts is the number of routed experts in each mixture-of-experts
	// layer (0: a dense model), ActiveExperts how many each token is routed
	// to, and ExpertIntermediate one expert's FFN width (gate, up and down
	// projections of Hidden × ExpertIntermediate each).
	Experts            int `json:"experts,omitempty"`
	ActiveExperts      int `json:"active_experts,omitempty"`
	ExpertIntermediate int `json:"expert_intermediate,omitempty"`
	// ExpertBytes is the stored size of one expert weight where the
	// checkpoint stores its experts differently from the rest of the body
	// (gpt-oss: MXFP4 experts, 4.25 bits with their scales, beside BF16
	// attention); 0 takes the body's quantization.
	ExpertBytes float64 `json:"expert_bytes,omitempty"`
	// ExpertLoadedBytes is what one expert weight takes in GPU memory once
	// the engine has repacked it for its kernels, where that is measured
	// to differ from ExpertBytes (gpt-oss's MXFP4 experts: mxfp4LoadedBytes);
	// 0 means as stored. It sizes the KV cache (WorkerMemory), not the
	// step's weight reads.
	ExpertLoadedBytes float64 `json:"expert_loaded_bytes,omitempty"`
	// FullAttentionLayers is how many layers attend over the whole context
	// where the others attend over a short sliding window (gpt-oss
	// alternates the two, with a 128-token window); 0 means every layer.
	// Only full-attention layers are counted in the cache's per-token size
	// and in prompt attention: a windowed layer keeps and reads at most its
	// window, priced apart (SlidingWindow). A vLLM run with its hybrid KV
	// cache manager off treats every layer as full and holds fewer tokens
	// than capsim assumes; that is not modelled, and neither are the
	// windows' own decode reads (≤ 128 tokens a layer).
	FullAttentionLayers int `json:"full_attention_layers,omitempty"`
	// SlidingWindow is the windowed layers' window in tokens (gpt-oss:
	// 128); 0 when every layer attends over the whole context. Their KV
	// takes memory beside the full layers' cache: vLLM V1's hybrid KV
	// cache manager takes it from the same block pool, each running
	// request holding the blocks over its last window
	// (sim.PoolConfig.WindowTokens); SGLang sizes a window pool of its own
	// (engine.Settings.WindowPool).
	SlidingWindow int `json:"sliding_window,omitempty"`
	// MoELayers is how many layers hold routed experts where the first
	// ones are dense (DeepSeek-V3: 58 of 61); 0 means every layer.
	MoELayers int `json:"moe_layers,omitempty"`
	// LatentKV is the width of a multi-head latent attention cache
	// (DeepSeek-V3's kv_lora_rank + qk_rope_head_dim = 576): one
	// compressed vector per token and layer in place of per-head keys and
	// values, kept whole on every tensor-parallel rank; 0 for models with
	// KV heads.
	LatentKV int `json:"latent_kv,omitempty"`
	// AttentionParams are the attention projections' parameters over all
	// layers where the heads formula (q and o of Heads·HeadDim, k and v
	// of KVHeads·HeadDim, each against Hidden) does not give them: latent
	// attention's low-rank projections. 0 means the formula.
	AttentionParams float64 `json:"attention_params,omitempty"`
	// AttentionDP is a deployment's data-parallel attention degree
	// (SGLang's --enable-dp-attention with --dp N): the TP ranks form N
	// groups that each attend over their own requests, so a token's KV
	// cache lives in one group only and every group holds a whole copy of
	// the attention weights. 0 or 1, or a degree that does not divide the
	// TP, is attention split by TP. Pricing sets it from the engine
	// settings (WithAttentionDP); no catalog entry has it.
	AttentionDP int `json:"attention_dp,omitempty"`
	// ExpertParallel is a deployment's expert-parallel degree (vLLM's
	// --enable-expert-parallel, over every GPU of the worker; SGLang's
	// --ep-size, TensorRT-LLM's --ep_size): the routed experts are dealt
	// whole to that many groups of ranks, each expert split over the
	// group's TP/EP ranks, instead of every expert split over all TP
	// ranks. 0 or 1 is experts split by TP. Pricing sets it from the
	// engine settings (WithExpertParallel); no catalog entry has it.
	ExpertParallel int    `json:"expert_parallel,omitempty"`
	Source         string `json:"source"`
}

// WithAttentionDP is m deployed with data-parallel attention of degree dp.
func (m LLM) WithAttentionDP(dp int) LLM {
	m.AttentionDP = dp
	return m
}

// AttentionDPAt is the data-parallel attention degree at tensor degree tp:
// AttentionDP where it is above 1 and divides tp, else 1.
func (m LLM) AttentionDPAt(tp int) int {
	if m.AttentionDP > 1 && tp%m.AttentionDP == 0 {
		return m.AttentionDP
	}
	return 1
}

// WithExpertParallel is m deployed with its experts spread over ep
// expert-parallel groups.
func (m LLM) WithExpertParallel(ep int) LLM {
	m.ExpertParallel = ep
	return m
}

// ExpertParallelAt is the expert-parallel degree of a worker at tensor
// degree tp: ExpertParallel capped at tp (a worker cannot spread its
// experts wider than its GPUs; vLLM's flag spreads them over all of a
// worker's, which a stated degree of the largest pool's TP says for a
// smaller one too), where that divides both tp and the experts; 1 for a
// dense model or experts split by TP.
func (m LLM) ExpertParallelAt(tp int) int {
	ep := min(m.ExpertParallel, tp)
	if !m.IsMoE() || ep <= 1 || tp%ep != 0 || m.Experts%ep != 0 {
		return 1
	}
	return ep
}

// attentionParams are the attention projections' parameters, all layers.
func (m LLM) attentionParams() float64 {
	if m.AttentionParams > 0 {
		return m.AttentionParams
	}
	return float64(m.Layers) * 2 * float64(m.Hidden) * float64(m.Heads*m.HeadDim+m.KVHeads*m.HeadDim)
}

// IsMoE reports whether m is a mixture-of-experts model.
func (m LLM) IsMoE() bool { return m.Experts > 0 && m.ActiveExperts > 0 }

// moeLayers is how many layers hold routed experts: 0 for a dense model,
// MoELayers where the first ones are dense, else every layer.
func (m LLM) moeLayers() int {
	switch {
	case !m.IsMoE():
		return 0
	case m.MoELayers > 0:
		return m.MoELayers
	}
	return m.Layers
}

// ExpertParams are the parameters of every routed expert of every layer.
func (m LLM) ExpertParams() float64 {
	return float64(m.moeLayers()) * float64(m.Experts) * 3 * float64(m.Hidden) * float64(m.ExpertIntermediate)
}

// ActiveBodyParams are the body parameters one token passes through: all
// of a dense model's, and a mixture-of-experts model's shared parts plus
// its ActiveExperts routed experts per layer. Its GEMM FLOPs follow from it.
func (m LLM) ActiveBodyParams() float64 {
	if !m.IsMoE() {
		return m.BodyParams()
	}
	return m.BodyParams() - m.ExpertParams()*(1-float64(m.ActiveExperts)/float64(m.Experts))
}

// WindowedKVShare is the windowed layers' KV per token as a share of the
// full-attention layers' (the cache's per-token size, KVBytesPerToken):
// 1 for gpt-oss, which alternates the two; 0 without a sliding window.
func (m LLM) WindowedKVShare() float64 {
	if m.SlidingWindow <= 0 || m.FullAttentionLayers <= 0 || m.FullAttentionLayers >= m.Layers {
		return 0
	}
	return float64(m.Layers-m.FullAttentionLayers) / float64(m.FullAttentionLayers)
}

// attentionLayers are the layers that attend over the whole context.
func (m LLM) attentionLayers() int {
	if m.FullAttentionLayers > 0 {
		return m.FullAttentionLayers
	}
	return m.Layers
}

// ffnWidth is the FFN width one token's activations pass through:
// Intermediate, or a mixture-of-experts model's active experts' together.
func (m LLM) ffnWidth() float64 {
	if m.IsMoE() {
		return float64(m.ActiveExperts) * float64(m.ExpertIntermediate)
	}
	return float64(m.Intermediate)
}

// ActivationTraffic is the memory traffic of a step's activations through
// the kernels between its GEMMs (LLM.ActivationKernels), kind by kind.
type ActivationTraffic struct {
	// BytesPerToken is what one kernel of each kind reads and writes for
	// one token; Kernels how many of that kind a step runs.
	BytesPerToken [5]float64 `json:"bytes_per_token"`
	Kernels       [5]float64 `json:"kernels"`
	Evicted       [5]bool    `json:"evicted"`
	// CacheBytes is the GPU's last-level cache, BytesPerS its peak bandwidth.
	CacheBytes float64 `json:"cache_bytes"`
	BytesPerS  float64 `json:"bytes_per_s"`
}

// Time is the peak-bandwidth time of a step's activation traffic over
// tokens tokens. A kernel whose inputs and outputs fit in the cache reads
// what the kernel before it left there and leaves its output for the
// next: it moves only what exceeds the cache to and from memory. A decode
// batch's activations (hundreds of tokens) mostly fit; a prefill chunk's
// (thousands) do not. An Evicted kind's input was written by a GEMM that
// went on to stream more weights through the cache than it holds, so all
// of it moves.
func (a ActivationTraffic) Time(tokens float64) float64 {
	if a.BytesPerS <= 0 || tokens <= 0 {
		return 0
	}
	t := 0.0
	for i, b := range a.BytesPerToken {
		cache := a.CacheBytes
		if a.Evicted[i] {
			cache = 0
		}
		if spill := b*tokens - cache; spill > 0 {
			t += a.Kernels[i] * spill
		}
	}
	return t / a.BytesPerS
}

// ActivationKernels is the activation traffic of one step of a
// tensor-parallel worker of degree tp on g, at 2 bytes an element, by kind
// of kernel: per layer, two fused residual-add-and-RMSNorm kernels (4
// hidden-wide passes, split by the data-parallel attention degree), the
// rotary embedding over the rank's query and key heads, the FFN's
// SiLU-and-mul (k of them for a mixture of experts) and a MoE layer's sum
// of its experts' outputs (2k+1 hidden-wide passes on every rank): the
// passes every catalog model has in vLLM's BF16 path.
//
// The expert kinds are Evicted: a fused expert GEMM streams more expert
// weights than the cache holds after writing each output, so the outputs
// are read back from memory, where a dense GEMM's are still cached for the
// next kernel. The cache rule (Time) is a lower bound on the traffic: it
// credits each kernel a whole cache of reuse.
func (m LLM) ActivationKernels(tp int, g GPU) ActivationTraffic {
	if tp < 1 {
		tp = 1
	}
	h, t := float64(m.Hidden), float64(tp)
	layers, moeLayers := float64(m.Layers), float64(m.moeLayers())
	const elem = 2
	a := ActivationTraffic{CacheBytes: g.L2MB * 1e6, BytesPerS: g.MemoryTBps * 1e12}
	a.BytesPerToken[0], a.Kernels[0] = elem*4*h/float64(m.AttentionDPAt(tp)), 2*layers
	a.BytesPerToken[1], a.Kernels[1] = elem*2*m.rotaryWidth()/t, layers
	a.BytesPerToken[2], a.Kernels[2] = elem*3*float64(m.Intermediate)/t, layers-moeLayers
	if moeLayers > 0 {
		k := float64(m.ActiveExperts)
		a.BytesPerToken[3], a.Kernels[3] = elem*3*k*float64(m.ExpertIntermediate)/t, moeLayers
		a.BytesPerToken[4], a.Kernels[4] = elem*(2*k+1)*h, moeLayers
		a.Evicted[3], a.Evicted[4] = true, true
	}
	return a
}

// KernelsPerStep counts the kernels of one forward step as vLLM's BF16
// path launches them, tensor-core kernels (heavy) apart from small ones.
// A dense layer: QKV, O, gate-up and down GEMMs and attention (heavy);
// two fused add-norms, rotary, the KV-cache write, SiLU-and-mul and the
// attention's split-KV combine (small). A mixture-of-experts layer adds
// the router GEMM and fused MoE's second GEMM, top-k, align and sum;
// latent attention adds the low-rank projections and their norms. Each
// step also embeds, norms, runs the LM head and samples.
func (m LLM) KernelsPerStep() (heavy, small float64) {
	layers, moe := float64(m.Layers), float64(m.moeLayers())
	heavy, small = 5*layers+2*moe, 6*layers+3*moe
	if m.LatentKV > 0 {
		heavy, small = heavy+3*layers, small+2*layers
	}
	return heavy + 1, small + 6
}

// KernelFloor is the seconds a step's kernels take in a CUDA graph beyond
// their roofline: KernelsPerStep at GEMMKernelUs and SmallKernelUs each.
func (m LLM) KernelFloor() float64 {
	heavy, small := m.KernelsPerStep()
	return (heavy*GEMMKernelUs + small*SmallKernelUs) * 1e-6
}

// rotaryWidth is how many values of a token's queries and keys the rotary
// embedding turns, over all heads: every query and KV head's, or for
// latent attention only the rotary part of each query head and the one
// rotary key all heads share (LatentRopeDim each).
func (m LLM) rotaryWidth() float64 {
	if m.LatentKV > 0 {
		return float64((m.Heads + 1) * LatentRopeDim)
	}
	return float64((m.Heads + m.KVHeads) * m.HeadDim)
}

// KVElemBytes is the size of one cached key or value element.
func (m LLM) KVElemBytes() float64 {
	if m.KVCacheBytes > 0 {
		return m.KVCacheBytes
	}
	return 2
}

// fp8KVCache reports whether a quantized checkpoint stores its KV cache in
// FP8 when the engine is left at its default: NVIDIA's Model Optimizer
// checkpoints (the nvidia/*-FP8 and *-FP4 repositories) write
// "kv_cache_quant_algo": "FP8" into hf_quant_config.json, and both vLLM
// (--kv-cache-dtype auto) and TensorRT-LLM follow it, halving KV bytes
// read and stored. Other FP8 builds (neuralmagic/RedHatAI, Qwen's own)
// carry no KV directive and keep BF16.
func fp8KVCache(name string, q Quantization) bool {
	org, _, ok := strings.Cut(strings.TrimSpace(name), "/")
	return ok && strings.EqualFold(org, "nvidia") && (q == QuantFP8 || q == QuantFP4)
}

// GPUs returns the GPU catalog, sorted by name.
func GPUs() []GPU {
	out := append([]GPU(nil), gpus...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LLMs returns the model catalog, sorted by name.
func LLMs() []LLM {
	out := append([]LLM(nil), llms...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// nameReplacer drops what normName ignores; built once (a Replacer per
// call was a third of the planner's CPU time).
var nameReplacer = strings.NewReplacer(" ", "", "_", "", "-", "", "(", "", ")", "", "nvidia", "")

func normName(s string) string {
	return nameReplacer.Replace(strings.ToLower(strings.TrimSpace(s)))
}

// gpuIndex maps every normalised GPU name and alias to its catalog entry,
// the first entry winning as a scan in catalog order would; pricing looks
// GPUs up for every pooled group of every candidate a plan searches.
var gpuIndex = func() map[string]int {
	idx := map[string]int{}
	for i, g := range gpus {
		for _, n := range append([]string{g.Name}, g.Aliases...) {
			if _, taken := idx[normName(n)]; !taken {
				idx[normName(n)] = i
			}
		}
	}
	return idx
}()

// LookupGPU finds a GPU by name or alias, ignoring case, spaces, dashes and an "NVIDIA" prefix.
func LookupGPU(name string) (GPU, error) {
	if i, ok := gpuIndex[normName(name)]; ok {
		return gpus[i], nil
	}
	names := make([]string, 0, len(gpus))
	for _, g := range GPUs() {
		names = append(names, g.Name)
	}
	return GPU{}, optionerr.New("model: ", nil, "unknown GPU %q (known: %s)", name, strings.Join(names, ", "))
}

// ShortName is a model id without its organisation: "Qwen3-32B".
func ShortName(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// SameModel reports whether two model names refer to the same model,
// case-insensitively, with or without the organisation.
func SameModel(a, b string) bool {
	a, b = strings.ToLower(strings.TrimSpace(a)), strings.ToLower(strings.TrimSpace(b))
	if a == b {
		return true
	}
	if strings.Contains(a, "/") && strings.Contains(b, "/") {
		return false
	}
	return ShortName(a) == ShortName(b)
}

// LookupLLM finds a model by Hugging Face id or short name, case-insensitively,
// or reads it from a config.json path (LoadHFConfig): a .json file, a path
// from "/" or ".", or a directory holding config.json that the catalog
// does not name.
// A quantized checkpoint ("nvidia/Llama-3.1-8B-Instruct-FP8", "Qwen3-32B-AWQ")
// is its base model with Quant set and its own name.
func LookupLLM(name string) (LLM, error) {
	if isConfigPath(name) {
		return lookupPath(name)
	}
	if m, ok := loaded.Load(strings.TrimSpace(name)); ok {
		return m.(LLM), nil
	}
	if base, q := splitQuant(name); q != QuantNone {
		m, err := lookupLLM(base)
		if err != nil && strings.HasPrefix(strings.ToLower(base), "meta-llama-") {
			// Quantizers keep "Meta-" on Llama 3.1+ names the catalog
			// writes without it (Meta-Llama-3 itself keeps it).
			m, err = lookupLLM(base[len("Meta-"):])
		}
		if err != nil {
			return LLM{}, err
		}
		m.Name, m.Quant = strings.TrimSpace(name), q
		if fp8KVCache(name, q) {
			m.KVCacheBytes = 1
		}
		return m, nil
	}
	m, err := lookupLLM(name)
	if err != nil && configDir(name) {
		return lookupPath(name)
	}
	return m, err
}

func lookupLLM(name string) (LLM, error) {
	// The catalog never changes: each name is looked up once (a fit's
	// cross-validation asked hundreds of thousands of times, 8% of its CPU).
	if r, ok := lookedUp.Load(name); ok {
		r := r.(lookup)
		return r.m, r.err
	}
	m, err := lookupLLMUncached(name)
	lookedUp.Store(name, lookup{m, err})
	return m, err
}

type lookup struct {
	m   LLM
	err error
}

// lookedUp memoises lookupLLM: name → lookup.
var lookedUp sync.Map

func lookupLLMUncached(name string) (LLM, error) {
	for _, m := range llms {
		if SameModel(m.Name, name) {
			return m, nil
		}
	}
	// A unique prefix of the short name ("Llama-3.2-3B" for the -Instruct model) is enough.
	want := strings.ToLower(ShortName(strings.TrimSpace(name)))
	var found []LLM
	for _, m := range llms {
		if want != "" && strings.HasPrefix(strings.ToLower(ShortName(m.Name)), want) {
			found = append(found, m)
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	names := make([]string, 0, len(llms))
	for _, m := range LLMs() {
		names = append(names, ShortName(m.Name))
	}
	return LLM{}, fmt.Errorf("model: unknown model %q (known: %s; or give the path of its config.json)", name, strings.Join(names, ", "))
}

// EmbedParams is the parameter count of the input embedding plus, when untied, the LM head.
func (m LLM) EmbedParams() float64 {
	e := float64(m.Vocab) * float64(m.Hidden)
	if m.TiedEmbed {
		return e
	}
	return 2 * e
}

// BodyParams are the parameters every prompt token passes through (all but embeddings and LM head).
func (m LLM) BodyParams() float64 { return m.Params - m.EmbedParams() }

// HeadParams are the LM-head parameters, used once per sampled token.
func (m LLM) HeadParams() float64 { return float64(m.Vocab) * float64(m.Hidden) }

// WeightBytes is the size of the weights at the given bytes per parameter (2 for BF16/FP16).
func (m LLM) WeightBytes(bytesPerParam float64) float64 { return m.Params * bytesPerParam }

// KVHeadsPerGPU is the KV heads one GPU holds at tensor-parallel degree tp:
// heads are split across GPUs, and replicated when tp exceeds their number.
func (m LLM) KVHeadsPerGPU(tp int) float64 {
	if tp <= m.KVHeads {
		return float64(m.KVHeads) / float64(tp)
	}
	return 1
}

// KVBytesPerToken is the KV cache of one token on one worker of tensor
// degree tp, summed over its GPUs (keys and values, every full-attention
// layer; a latent cache once per layer on every GPU). Under data-parallel
// attention a token is cached by one attention group of tp/AttentionDP
// GPUs only.
func (m LLM) KVBytesPerToken(tp int, bytesPerElem float64) float64 {
	if dp := m.AttentionDPAt(tp); dp > 1 {
		m.AttentionDP = 0
		return m.KVBytesPerToken(tp/dp, bytesPerElem)
	}
	if m.LatentKV > 0 {
		return float64(m.attentionLayers()) * float64(m.LatentKV) * float64(tp) * bytesPerElem
	}
	return 2 * float64(m.attentionLayers()) * m.KVHeadsPerGPU(tp) * float64(tp) * float64(m.HeadDim) * bytesPerElem
}

// Device is the GPU as an engine's defaults read it (engine.Defaults).
func (g GPU) Device() engine.Device {
	return engine.Device{Name: g.Name, MemoryBytes: g.DeviceMemoryBytes()}
}
