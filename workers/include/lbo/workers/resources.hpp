#pragma once
// What a worker's slots run on: the cores each slot's trials are pinned to, the GPUs they see
// and the threads they may use. Planned once per worker (a local pool or an MPI rank) from its
// CPU affinity mask, its visible GPUs and the job's [workers] keys.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lbo::workers {

/// The job's [workers] resource keys, as a worker needs them.
struct ResourceRequest {
  /// Slots to run; nullopt: "auto", as many threads_per_trial-sized slots as the cores allow.
  std::optional<int> slots = 1;
  int threads_per_trial = 1;
  /// threads_per_trial came from the job file (or slots are "auto"): the thread variables
  /// (OMP_NUM_THREADS, ...) are set and slots are pinned. Otherwise the objective's
  /// environment keeps what lbo had, as before these keys existed.
  bool manage_threads = false;
  int gpus_per_trial = 0;
  /// [workers] gpus: the devices to split; empty: those the environment makes visible.
  std::vector<std::string> gpus;
};

/// One slot's share.
struct SlotResources {
  std::vector<int> cores;         ///< CPUs its trials are pinned to; empty: not pinned
  std::vector<std::string> gpus;  ///< its devices (CUDA_VISIBLE_DEVICES); empty: none assigned
  int threads = 1;                ///< LBO_THREADS (and OMP_NUM_THREADS, ... when managed)
  bool manage_threads = false;
};

struct SlotPlan {
  std::vector<SlotResources> slots;
  /// What differs from the request (fewer slots for lack of GPUs, slots sharing cores), for the
  /// log: nothing is changed silently.
  std::vector<std::string> notes;
};

/// Where a worker's devices come from, and which they are.
struct VisibleGpus {
  std::vector<std::string> devices;
  std::string source;  ///< "[workers] gpus", "CUDA_VISIBLE_DEVICES", ...; empty when none
};

/// The part of a node's cores or devices that belongs to one of `count` workers sharing them
/// (MPI ranks on one node that see the same mask or devices): the index-th of count.
struct Share {
  int index = 0;
  int count = 1;
};

/// The CPUs of this thread's affinity mask, ascending.
std::vector<int> affinity_cores();

/// The devices `request.gpus` names, else those of the first of CUDA_VISIBLE_DEVICES,
/// ROCR_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS that is set. `getenv` is injectable
/// for tests.
VisibleGpus visible_gpus(const ResourceRequest& request,
                         const std::function<const char*(const char*)>& getenv = {});

/// The share'th contiguous part of `items` (every item in exactly one share).
template <class T>
std::vector<T> share_of(const std::vector<T>& items, Share share) {
  const std::size_t n = items.size();
  const std::size_t count = static_cast<std::size_t>(share.count < 1 ? 1 : share.count);
  const std::size_t index = static_cast<std::size_t>(share.index < 0 ? 0 : share.index) % count;
  return std::vector<T>(items.begin() + static_cast<std::ptrdiff_t>(n * index / count),
                        items.begin() + static_cast<std::ptrdiff_t>(n * (index + 1) / count));
}

/// The slots of a worker with `cores` and `gpus`:
/// - slots: request.slots, or for "auto" cores / threads_per_trial (at least 1);
/// - with gpus_per_trial = G > 0, at most |gpus| / G slots (possibly 0), each with its own
///   disjoint group of G devices;
/// - with managed threads and room for it (slots · threads_per_trial ≤ |cores|), each slot
///   pinned to its own threads_per_trial cores; otherwise not pinned, and a note says why.
/// `who` names the worker in the notes ("rank 3", "local slots").
SlotPlan plan_slots(const ResourceRequest& request, const std::vector<int>& cores,
                    const std::vector<std::string>& gpus, std::string_view who);

/// "0-3,8,10-11": a CPU list as taskset and /proc write it; "" for none.
std::string cpu_list(const std::vector<int>& cores);
/// "0,1": devices as CUDA_VISIBLE_DEVICES takes them.
std::string device_list(const std::vector<std::string>& devices);
/// Splits "0,1, 2" into its items (spaces trimmed, empty items dropped). "NoDevFiles" (what
/// SLURM sets when a job has no GPU) and "" are no devices.
std::vector<std::string> split_devices(std::string_view text);

/// One line per slot plan for the log: "4 slot(s) × 2 thread(s), pinned to cores 0-7, GPUs 0,1,2,3".
std::string describe(const SlotPlan& plan);

}  // namespace lbo::workers
