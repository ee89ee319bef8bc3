#include "lbo/orchestrator/job_identity.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

using namespace lbo::orchestrator;

namespace {

const std::string kSpace = "kind = { type = \"categorical\", choices = [\"a\", \"b\"] }\nk = { type = \"int\", low = 1, high = 5, when = { kind = \"b\" } }\n";
const std::string kTasks = "[[tasks]]\nname = \"one\"\nbudget = 4\n[[tasks]]\nname = \"two\"\nbudget = 4\n";

JobIdentity identity(const lbo::testing::ScratchDir& dir, const std::string& space = kSpace,
                     const std::string& tasks = kTasks, const std::string& objective = "") {
  return JobIdentity::of(lbo::testing::job_from(lbo::testing::test_job(space, tasks, objective), dir.path()));
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST(JobIdentityTest, the_same_job_and_appended_tasks_and_new_budgets_are_compatible) {
  lbo::testing::ScratchDir dir;
  const JobIdentity base = identity(dir);
  EXPECT_TRUE(base.incompatibilities(identity(dir)).empty());
  EXPECT_TRUE(base.incompatibilities(identity(dir, kSpace, kTasks + "[[tasks]]\nname = \"three\"\nbudget = 2\n")).empty());
  std::string more = kTasks;
  more.replace(more.find("budget = 4"), 10, "budget = 9");
  EXPECT_TRUE(base.incompatibilities(identity(dir, kSpace, more)).empty());
  // Timeouts and retries do not change what a result means.
  EXPECT_TRUE(base.incompatibilities(identity(dir, kSpace, kTasks, "timeout_s = 5\nretries = 2")).empty());
}

TEST(JobIdentityTest, changed_space_direction_command_or_tasks_are_named) {
  lbo::testing::ScratchDir dir;
  const JobIdentity base = identity(dir);
  std::string space = kSpace;
  space.replace(space.find("high = 5"), 8, "high = 7");
  EXPECT_NE(joined(base.incompatibilities(identity(dir, space))).find("space.k: int [1, 5] when kind in {b} → int [1, 7] when kind in {b}"),
            std::string::npos)
      << joined(base.incompatibilities(identity(dir, space)));
  const std::string extra = joined(base.incompatibilities(identity(dir, kSpace + "z = { type = \"float\", low = 0, high = 1 }\n")));
  EXPECT_NE(extra.find("space.z: new parameter"), std::string::npos) << extra;
  const std::string removed = joined(base.incompatibilities(identity(dir, "kind = { type = \"categorical\", choices = [\"a\", \"b\"] }\n")));
  EXPECT_NE(removed.find("space.k: removed"), std::string::npos) << removed;
  std::string reversed = lbo::testing::test_job(kSpace, kTasks);
  reversed.replace(reversed.find("maximize"), 8, "minimize");
  const JobIdentity minimize = JobIdentity::of(lbo::testing::job_from(reversed, dir.path()));
  EXPECT_NE(joined(base.incompatibilities(minimize)).find("objective.direction: maximize → minimize"), std::string::npos);
  std::string other_command = lbo::testing::test_job(kSpace, kTasks);
  other_command.replace(other_command.find("command = [\""), 12, "command = [\"/bin/sh\", \"");
  EXPECT_NE(joined(base.incompatibilities(JobIdentity::of(lbo::testing::job_from(other_command, dir.path())))).find("objective.command:"),
            std::string::npos);
  const std::string swapped = joined(base.incompatibilities(identity(dir, kSpace, "[[tasks]]\nname = \"two\"\nbudget = 4\n[[tasks]]\nname = \"one\"\nbudget = 4\n")));
  EXPECT_NE(swapped.find("tasks: two moved before an earlier task (tasks may only be appended)"), std::string::npos) << swapped;
  const std::string dropped = joined(base.incompatibilities(identity(dir, kSpace, "[[tasks]]\nname = \"one\"\nbudget = 4\n")));
  EXPECT_NE(dropped.find("tasks: two was removed (tasks of the job file may only be appended)"), std::string::npos) << dropped;
}

TEST(JobIdentityTest, tasks_added_at_runtime_stay_without_the_job_file_naming_them) {
  lbo::testing::ScratchDir dir;
  JobIdentity run = identity(dir);
  // The run gained two tasks while it ran: one by add-task, one from the watched folder.
  run.tasks.push_back({"added", 3, (dir.path() / "a.csv").string(), lbo::jobs::TaskOrigin::added});
  run.tasks.push_back({"watched", 5, "", lbo::jobs::TaskOrigin::watched});
  // The job file still names its own two tasks, then appends one and changes a budget.
  std::string file_tasks = kTasks + "[[tasks]]\nname = \"three\"\nbudget = 2\n";
  file_tasks.replace(file_tasks.find("budget = 4"), 10, "budget = 6");
  const lbo::jobs::JobSpec file = lbo::testing::job_from(lbo::testing::test_job(kSpace, file_tasks), dir.path());
  EXPECT_TRUE(run.incompatibilities(JobIdentity::of(file)).empty()) << joined(run.incompatibilities(JobIdentity::of(file)));
  const std::vector<lbo::jobs::TaskSpec> merged = run.merged_tasks(file);
  ASSERT_EQ(merged.size(), 5u);
  const std::vector<std::string> names = {"one", "two", "added", "watched", "three"};
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(merged[i].name, names[i]);
  EXPECT_EQ(merged[0].budget, 6);  // the file's new budget
  EXPECT_EQ(merged[2].budget, 3);
  EXPECT_EQ(merged[2].origin, lbo::jobs::TaskOrigin::added);
  EXPECT_EQ(merged[2].dataset, dir.path() / "a.csv");
  EXPECT_EQ(merged[4].origin, lbo::jobs::TaskOrigin::job_file);
  // A job file that names a runtime task must mean the same dataset.
  const std::string clash = joined(run.incompatibilities(identity(dir, kSpace, kTasks + "[[tasks]]\nname = \"added\"\nbudget = 2\n")));
  EXPECT_NE(clash.find("tasks[2].dataset: " + (dir.path() / "a.csv").string() + " → "), std::string::npos) << clash;
}

// Which files of the watched folder become tasks does not change what a result means: a run
// resumes under another watch_pattern.
TEST(JobIdentityTest, a_changed_watch_pattern_is_compatible) {
  lbo::testing::ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "incoming");
  const auto watching = [&](const std::string& pattern) {
    return JobIdentity::of(lbo::testing::job_from(
        lbo::testing::test_job(kSpace, kTasks, "",
                               "surrogate = \"random\"\n[schedule]\nwatch = \"incoming\"\nwatch_pattern = \"" + pattern + "\""),
        dir.path()));
  };
  EXPECT_TRUE(watching("*.csv").incompatibilities(watching("year-*.parquet")).empty());
  EXPECT_TRUE(identity(dir).incompatibilities(watching("*.txt")).empty());
}
