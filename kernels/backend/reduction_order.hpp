// The fixed shape of kryflow's reductions, shared by the cuda kernels and the cpu emulation.
//
// A sum of n terms runs on G = min(ceil(n / (kReductionThreads * kReductionElementsPerThread)),
// kMaxReductionBlocks) blocks of kReductionThreads threads. Thread j of block b adds, in this
// order, the pairs of terms p = b * kReductionThreads + j + m * G * kReductionThreads
// (m = 0, 1, ...; terms 2p then 2p + 1), and thread 0 of block 0 finally adds term n - 1 when n
// is odd. Each block adds its threads' sums with block_sum (a warp-shuffle tree per warp, then
// the same tree on the eight warp sums padded with zeros); the block sums are added the same way
// (thread j adds block sums j, j + kReductionThreads, ...). With fused multiply-add disabled on
// both sides, the cpu backend reproduces the cuda result bit for bit.
#pragma once

namespace kryflow::kernels {

inline constexpr int kReductionThreads = 256;
inline constexpr int kReductionElementsPerThread = 4;
inline constexpr int kMaxReductionBlocks = 1024;
inline constexpr int kMaxReductionValues = 8;

}  // namespace kryflow::kernels
