#include "lbo/workers/resources.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

namespace lbo::workers {

std::vector<int> affinity_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cores.push_back(cpu);
  }
  return cores;
}

std::vector<std::string> split_devices(std::string_view text) {
  std::vector<std::string> devices;
  if (text == "NoDevFiles") return devices;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) devices.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return devices;
}

VisibleGpus visible_gpus(const ResourceRequest& request, const std::function<const char*(const char*)>& getenv) {
  if (!request.gpus.empty()) return {request.gpus, "[workers] gpus"};
  const auto lookup = [&](const char* name) { return getenv ? getenv(name) : std::getenv(name); };
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    if (const char* value = lookup(name)) return {split_devices(value), name};
  }
  return {};
}

SlotPlan plan_slots(const ResourceRequest& request, const std::vector<int>& cores,
                    const std::vector<std::string>& gpus, std::string_view who) {
  SlotPlan plan;
  const int threads = std::max(request.threads_per_trial, 1);
  const int core_count = static_cast<int>(cores.size());
  int slots = request.slots.value_or(std::max(core_count / threads, 1));
  if (!request.slots && core_count < threads) {
    plan.notes.push_back(std::string(who) + ": " + std::to_string(core_count) + " core(s) in its affinity mask for threads_per_trial = " +
                         std::to_string(threads) + ": 1 slot, sharing them");
  }
  if (request.gpus_per_trial > 0) {
    const int fit = static_cast<int>(gpus.size()) / request.gpus_per_trial;
    if (fit < slots) {
      plan.notes.push_back(std::string(who) + ": " + std::to_string(gpus.size()) + " GPU(s) for gpus_per_trial = " +
                           std::to_string(request.gpus_per_trial) + ": " + std::to_string(fit) + " slot(s) instead of " +
                           std::to_string(slots));
      slots = fit;
    }
  }
  const bool pin = request.manage_threads && slots > 0 && slots * threads <= core_count;
  if (request.manage_threads && slots > 0 && !pin) {
    plan.notes.push_back(std::string(who) + ": " + std::to_string(slots) + " slot(s) × " + std::to_string(threads) +
                         " thread(s) need more than its " + std::to_string(core_count) +
                         " core(s): trials are not pinned and share them");
  }
  for (int s = 0; s < slots; ++s) {
    SlotResources slot;
    slot.threads = threads;
    slot.manage_threads = request.manage_threads;
    if (pin) slot.cores.assign(cores.begin() + s * threads, cores.begin() + (s + 1) * threads);
    if (request.gpus_per_trial > 0) {
      const auto first = gpus.begin() + static_cast<std::ptrdiff_t>(s) * request.gpus_per_trial;
      slot.gpus.assign(first, first + request.gpus_per_trial);
    }
    plan.slots.push_back(std::move(slot));
  }
  return plan;
}

std::string cpu_list(const std::vector<int>& cores) {
  std::string text;
  for (std::size_t i = 0; i < cores.size();) {
    std::size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(cores[i]);
    if (j > i) text += "-" + std::to_string(cores[j]);
    i = j + 1;
  }
  return text;
}

std::string device_list(const std::vector<std::string>& devices) {
  std::string text;
  for (const std::string& d : devices) text += (text.empty() ? "" : ",") + d;
  return text;
}

std::string describe(const SlotPlan& plan) {
  std::string text = std::to_string(plan.slots.size()) + " slot(s)";
  if (plan.slots.empty()) return text;
  const SlotResources& first = plan.slots.front();
  if (first.manage_threads) text += " × " + std::to_string(first.threads) + " thread(s)";
  if (!first.cores.empty()) {
    std::vector<int> cores;
    for (const SlotResources& s : plan.slots) cores.insert(cores.end(), s.cores.begin(), s.cores.end());
    text += ", pinned to cores " + cpu_list(cores);
  }
  if (!first.gpus.empty()) {
    std::vector<std::string> gpus;
    for (const SlotResources& s : plan.slots) gpus.insert(gpus.end(), s.gpus.begin(), s.gpus.end());
    text += ", GPUs " + device_list(gpus) + " (" + std::to_string(first.gpus.size()) + " per trial)";
  }
  return text;
}

}  // namespace lbo::workers
