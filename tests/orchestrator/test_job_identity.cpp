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
  EXPECT_NE(swapped.find("tasks[0]: one → two (tasks may only be appended)"), std::string::npos) << swapped;
  const std::string dropped = joined(base.incompatibilities(identity(dir, kSpace, "[[tasks]]\nname = \"one\"\nbudget = 4\n")));
  EXPECT_NE(dropped.find("tasks[1]: task two was removed"), std::string::npos) << dropped;
}
