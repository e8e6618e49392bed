// Host-visible entry points of the CUDA runtime layer; no CUDA header is needed to include this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kryflow::kernels::cuda {

struct Context;

/// Opens `device`, creates its stream and configures its stream-ordered memory pool.
std::shared_ptr<Context> create_context(int device);
std::string device_name(const Context& context);
/// Stream-ordered allocation from the pool; throws OutOfMemory with bytes requested and free.
void* allocate(Context& context, std::size_t bytes);
void deallocate(Context& context, void* pointer) noexcept;
/// The device's free bytes plus the bytes the pool has reserved but not handed out.
std::size_t available_memory(Context& context);
/// The device's L2 cache in bytes.
std::size_t l2_cache_bytes(const Context& context);
void synchronize(Context& context);
/// Copies between host and device or within a device, ordered on the stream, and waits.
void copy(Context& context, void* dst, bool dst_on_device, const void* src, bool src_on_device,
          std::size_t bytes);
/// Copies `count` doubles from device memory to the host through the pinned staging area,
/// ordered on the stream, and waits (one counted wait).
void read_to_host(Context& context, double* host, const double* device, std::size_t count);
/// How often the host has waited for the context's stream (see Context::host_waits).
std::uint64_t host_waits(const Context& context);

}  // namespace kryflow::kernels::cuda
