// Slot planning: cores, GPUs and threads per slot (workers/resources.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lbo/workers/resources.hpp"

using namespace lbo::workers;

namespace {

std::vector<int> range(int first, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}

ResourceRequest request(std::optional<int> slots, int threads, int gpus = 0, bool manage = true) {
  ResourceRequest r;
  r.slots = slots;
  r.threads_per_trial = threads;
  r.manage_threads = manage;
  r.gpus_per_trial = gpus;
  return r;
}

}  // namespace

TEST(ResourcesTest, auto_fills_the_cores_with_disjoint_pinned_slots) {
  const SlotPlan plan = plan_slots(request(std::nullopt, 4), range(8, 16), {}, "rank 1");
  ASSERT_EQ(plan.slots.size(), 4u);
  EXPECT_TRUE(plan.notes.empty());
  std::set<int> seen;
  for (std::size_t s = 0; s < plan.slots.size(); ++s) {
    EXPECT_EQ(plan.slots[s].cores, range(8 + 4 * static_cast<int>(s), 4));
    EXPECT_EQ(plan.slots[s].threads, 4);
    EXPECT_TRUE(plan.slots[s].manage_threads);
    seen.insert(plan.slots[s].cores.begin(), plan.slots[s].cores.end());
  }
  EXPECT_EQ(seen.size(), 16u);
  // 10 cores hold two 4-thread slots; the 2 left over stay unused rather than shared.
  EXPECT_EQ(plan_slots(request(std::nullopt, 4), range(0, 10), {}, "rank 1").slots.size(), 2u);
  EXPECT_EQ(describe(plan), "4 slot(s) × 4 thread(s), pinned to cores 8-23");
}

TEST(ResourcesTest, fewer_cores_than_a_trial_needs_run_one_unpinned_slot_and_say_so) {
  const SlotPlan plan = plan_slots(request(std::nullopt, 8), range(0, 2), {}, "rank 3");
  ASSERT_EQ(plan.slots.size(), 1u);
  EXPECT_TRUE(plan.slots[0].cores.empty());
  ASSERT_EQ(plan.notes.size(), 2u);
  EXPECT_NE(plan.notes[0].find("rank 3: 2 core(s)"), std::string::npos) << plan.notes[0];
  EXPECT_NE(plan.notes[1].find("not pinned"), std::string::npos) << plan.notes[1];
}

TEST(ResourcesTest, explicit_slots_beyond_the_cores_share_them_and_say_so) {
  const SlotPlan plan = plan_slots(request(3, 2), range(0, 4), {}, "local slots");
  ASSERT_EQ(plan.slots.size(), 3u);
  for (const SlotResources& s : plan.slots) EXPECT_TRUE(s.cores.empty());
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("3 slot(s) × 2 thread(s) need more than its 4 core(s)"), std::string::npos) << plan.notes[0];
}

TEST(ResourcesTest, unmanaged_threads_leave_slots_unpinned_without_a_note) {
  const SlotPlan plan = plan_slots(request(2, 1, 0, false), range(0, 4), {}, "local slots");
  ASSERT_EQ(plan.slots.size(), 2u);
  for (const SlotResources& s : plan.slots) {
    EXPECT_TRUE(s.cores.empty());
    EXPECT_FALSE(s.manage_threads);
  }
  EXPECT_TRUE(plan.notes.empty());
  EXPECT_EQ(describe(plan), "2 slot(s)");
}

TEST(ResourcesTest, gpus_are_split_into_disjoint_groups_and_limit_the_slots) {
  const std::vector<std::string> gpus{"0", "1", "2", "3", "4"};
  const SlotPlan plan = plan_slots(request(std::nullopt, 1, 2), range(0, 8), gpus, "rank 2");
  ASSERT_EQ(plan.slots.size(), 2u);  // 8 cores would hold 8 slots; 5 GPUs hold two pairs
  EXPECT_EQ(plan.slots[0].gpus, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(plan.slots[1].gpus, (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(plan.slots[0].cores, (std::vector<int>{0}));
  EXPECT_EQ(plan.slots[1].cores, (std::vector<int>{1}));
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_EQ(plan.notes[0], "rank 2: 5 GPU(s) for gpus_per_trial = 2: 2 slot(s) instead of 8");
  EXPECT_EQ(describe(plan), "2 slot(s) × 1 thread(s), pinned to cores 0-1, GPUs 0,1,2,3 (2 per trial)");

  const SlotPlan none = plan_slots(request(4, 1, 1), range(0, 8), {}, "rank 5");
  EXPECT_TRUE(none.slots.empty());
  ASSERT_EQ(none.notes.size(), 1u);
  EXPECT_NE(none.notes[0].find("0 GPU(s) for gpus_per_trial = 1: 0 slot(s) instead of 4"), std::string::npos);
}

TEST(ResourcesTest, visible_gpus_come_from_the_job_then_the_first_variable_set) {
  std::map<std::string, std::string> env;
  const auto getenv = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_TRUE(visible_gpus({}, getenv).devices.empty());
  EXPECT_TRUE(visible_gpus({}, getenv).source.empty());
  env["SLURM_JOB_GPUS"] = "4,5";
  EXPECT_EQ(visible_gpus({}, getenv).devices, (std::vector<std::string>{"4", "5"}));
  env["SLURM_STEP_GPUS"] = "6";
  EXPECT_EQ(visible_gpus({}, getenv).source, "SLURM_STEP_GPUS");
  env["ROCR_VISIBLE_DEVICES"] = "1";
  EXPECT_EQ(visible_gpus({}, getenv).source, "ROCR_VISIBLE_DEVICES");
  env["CUDA_VISIBLE_DEVICES"] = "GPU-aa, GPU-bb";
  const VisibleGpus cuda = visible_gpus({}, getenv);
  EXPECT_EQ(cuda.source, "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(cuda.devices, (std::vector<std::string>{"GPU-aa", "GPU-bb"}));
  ResourceRequest job;
  job.gpus = {"7"};
  EXPECT_EQ(visible_gpus(job, getenv).source, "[workers] gpus");
  EXPECT_EQ(visible_gpus(job, getenv).devices, job.gpus);
  // SLURM's word for a job without GPUs, and an empty variable: none (the source still says why).
  env["CUDA_VISIBLE_DEVICES"] = "NoDevFiles";
  EXPECT_TRUE(visible_gpus({}, getenv).devices.empty());
  env["CUDA_VISIBLE_DEVICES"] = "";
  EXPECT_TRUE(visible_gpus({}, getenv).devices.empty());
  EXPECT_EQ(visible_gpus({}, getenv).source, "CUDA_VISIBLE_DEVICES");
}

TEST(ResourcesTest, shares_cover_every_item_once) {
  const std::vector<int> cores = range(0, 10);
  for (int count = 1; count <= 4; ++count) {
    std::vector<int> all;
    for (int index = 0; index < count; ++index) {
      const std::vector<int> part = share_of(cores, Share{index, count});
      EXPECT_GE(part.size(), 10u / static_cast<std::size_t>(count));
      all.insert(all.end(), part.begin(), part.end());
    }
    EXPECT_EQ(all, cores) << count << " shares";
  }
  EXPECT_EQ(share_of(std::vector<std::string>{"0", "1", "2", "3"}, Share{1, 2}), (std::vector<std::string>{"2", "3"}));
}

TEST(ResourcesTest, lists_read_as_taskset_and_cuda_write_them) {
  EXPECT_EQ(cpu_list({}), "");
  EXPECT_EQ(cpu_list({3}), "3");
  EXPECT_EQ(cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(device_list({"0", "GPU-x"}), "0,GPU-x");
  EXPECT_EQ(split_devices(" 0, 1,,2 "), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_TRUE(split_devices("").empty());
}

TEST(ResourcesTest, the_affinity_mask_is_what_the_kernel_reports) {
  const std::vector<int> cores = affinity_cores();
  ASSERT_FALSE(cores.empty());
  EXPECT_TRUE(std::is_sorted(cores.begin(), cores.end()));
}
