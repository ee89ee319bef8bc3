// A table that restricts proposals (objective.table_restrict): a task's untaken rows are those
// none of its trials landed on (nearest row), a repeated configuration is one row, the nearest
// untaken row is found among them, and the random and model policies propose only untaken rows
// of the task, each once, until the task has taken them all.

#include "table_rows.hpp"

#include <gtest/gtest.h>

#include "initial_design.hpp"

#include <set>

#include "lbo/jobs/objective_table.hpp"

#include "lbo/orchestrator/model_policy.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
using lbo::jobs::Config;

namespace {

// Task a: x = 0.0, 0.25, 0.5, 0.75, 1.0 and 0.5 again (a repeat); task b: x = 0.1, 0.9.
// The objective rises with x.
std::string table_job(const std::filesystem::path& dir, const std::string& surrogate, int budget_a = 5) {
  lbo::testing::write_text(dir / "evals.csv",
                           "task,x,y\na,0.0,0\na,0.25,1\na,0.5,2\na,0.75,3\na,1.0,4\na,0.5,9\nb,0.1,5\nb,0.9,6\n");
  return "name = \"t\"\nseed = 3\n[objective]\ntable = \"evals.csv\"\ntable_objective = \"y\"\ntable_restrict = true\n"
         "direction = \"maximize\"\n[policy]\nsurrogate = \"" + surrogate + "\"\ninitial_random = 2\n"
         "[space]\nx = { type = \"float\", low = 0, high = 1 }\n"
         "[[tasks]]\nname = \"a\"\nbudget = " + std::to_string(budget_a) + "\n[[tasks]]\nname = \"b\"\nbudget = 2\n";
}

double x_of(const Config& c) { return *c.values[0]; }

}  // namespace

TEST(TableRowsTest, untaken_rows_leave_out_those_a_trial_landed_on_and_repeats) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(table_job(dir.path(), "random"), dir.path());
  const std::shared_ptr<const TableRows> rows = TableRows::of(job);
  ASSERT_TRUE(rows);
  RunState state = lbo::testing::started_state(job);
  const auto xs = [&](int task) {
    std::vector<double> out;
    for (const auto* row : rows->untaken(state, task)) out.push_back(x_of(row->config));
    return out;
  };
  EXPECT_EQ(xs(0), (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0})) << "the second 0.5 repeats the first";
  EXPECT_EQ(xs(1), (std::vector<double>{0.1, 0.9}));
  lbo::testing::start_trial(state, 0, Config{{0.7}});  // lands on 0.75
  lbo::testing::start_trial(state, 0, Config{{0.0}});
  EXPECT_EQ(xs(0), (std::vector<double>{0.25, 0.5, 1.0}));
  EXPECT_EQ(xs(1), (std::vector<double>{0.1, 0.9})) << "another task's trials take nothing of b";
  EXPECT_EQ(x_of(*rows->nearest_untaken(state, 0, Config{{0.8}})), 1.0) << "0.75 is taken";
  EXPECT_EQ(x_of(*rows->nearest_untaken(state, 0, Config{{0.1}})), 0.25);
  // What an earlier best stands for: its nearest row of all, or nothing once that is taken.
  EXPECT_FALSE(rows->nearest_if_untaken(state, 0, Config{{0.8}})) << "0.75 is taken";
  EXPECT_EQ(x_of(*rows->nearest_if_untaken(state, 0, Config{{0.9}})), 1.0);
  EXPECT_EQ(x_of(*rows->nearest_if_untaken(state, 0, Config{{0.45}})), 0.5);
  EXPECT_EQ(rows->encoded_untaken(state, 0).rows(), 3);
  std::mt19937_64 rng(1);
  std::set<double> drawn;
  for (int i = 0; i < 200; ++i) drawn.insert(x_of(*rows->draw(state, 0, rng)));
  EXPECT_EQ(drawn, (std::set<double>{0.25, 0.5, 1.0}));
  for (double x : {0.25, 0.5, 1.0}) lbo::testing::start_trial(state, 0, Config{{x}});
  EXPECT_FALSE(rows->draw(state, 0, rng));
  EXPECT_FALSE(rows->nearest_untaken(state, 0, Config{{0.5}}));
  EXPECT_FALSE(TableRows::of(lbo::testing::job_from(lbo::testing::test_job(), dir.path())));
}

// Each policy, asked for every trial of task a's budget, proposes each row of a exactly once;
// the model (lbo, after its two-row design) ranks only untaken rows.
TEST(TableRowsTest, the_policies_propose_each_untaken_row_of_the_task_once) {
  for (const std::string surrogate : {"random", "gp"}) {
    lbo::testing::ScratchDir dir;
    const lbo::jobs::JobSpec job = lbo::testing::job_from(table_job(dir.path(), surrogate), dir.path());
    PolicyOptions options;
    options.sync = true;
    std::unique_ptr<Policy> policy = make_policy(job, options);
    RunState state = lbo::testing::started_state(job);
    std::set<double> proposed;
    for (int i = 0; i < 5; ++i) {
      const Config c = policy->propose(state, 0, state.next_trial_id());
      EXPECT_TRUE(proposed.insert(x_of(c)).second) << surrogate << ": row " << x_of(c) << " proposed twice";
      const std::int64_t id = lbo::testing::start_trial(state, 0, c);
      lbo::testing::end_attempt(state, id, lbo::testing::ok_with(x_of(c)));
      lbo::testing::commit_and_fit(*policy, state);
    }
    EXPECT_EQ(proposed, (std::set<double>{0.0, 0.25, 0.5, 0.75, 1.0})) << surrogate;
  }
}

// A table that does not restrict proposals: a trial evaluates its nearest row, and a
// configuration whose nearest row the task took counts as taken (its value would repeat). The
// objective rises with x over 21 rows, so the model is drawn to the incumbent's cell at x = 1,
// where a proposal at 0.99 would repeat row 1.0: the first 21 trials of each surrogate land on
// 21 rows. Then repeats cannot be helped, and the model goes on proposing.
TEST(TableRowsTest, without_restriction_a_proposal_lands_on_a_row_the_task_took_only_once_all_are) {
  for (const std::string surrogate : {"gp", "lbo"}) {
    lbo::testing::ScratchDir dir;
    std::string csv = "task,x,y\n";
    for (int i = 0; i <= 20; ++i) csv += "a," + std::to_string(i / 20.0) + "," + std::to_string(i * i) + "\n";
    lbo::testing::write_text(dir.path() / "evals.csv", csv);
    const lbo::jobs::JobSpec job = lbo::testing::job_from(
        "name = \"t\"\nseed = 3\n[objective]\ntable = \"evals.csv\"\ntable_objective = \"y\"\n"
        "direction = \"maximize\"\n[policy]\nsurrogate = \"" + surrogate + "\"\ninitial_random = 2\n"
        "[space]\nx = { type = \"float\", low = 0, high = 1 }\n[[tasks]]\nname = \"a\"\nbudget = 25\n",
        dir.path());
    ASSERT_FALSE(TableRows::of(job)) << "proposals are not restricted to the rows";
    PolicyOptions options;
    options.sync = true;
    std::unique_ptr<Policy> policy = make_policy(job, options);
    RunState state = lbo::testing::started_state(job);
    std::set<std::size_t> lines;
    for (int i = 0; i < 25; ++i) {
      const Proposal p = policy->propose_among(state, {0}, state.next_trial_id());
      const lbo::jobs::ObjectiveTable::Match row = job.objective.table_data->nearest("a", p.config);
      ASSERT_NE(row.row, nullptr);
      const bool fresh = lines.insert(row.row->line).second;
      if (i < 21) {
        EXPECT_TRUE(fresh) << surrogate << ": trial " << i << " at x = " << x_of(p.config) << " lands on line " << row.row->line << " again";
      } else {
        EXPECT_FALSE(fresh);
        EXPECT_EQ(p.source, ProposalSource::model) << surrogate << ": trial " << i << ": " << p.note;
      }
      const std::int64_t id = lbo::testing::start_trial(state, 0, p.config, "local:0", p.source, p.note);
      lbo::testing::end_attempt(state, id, lbo::testing::ok_with(*row.row->objective));
      lbo::testing::commit_and_fit(*policy, state);
    }
  }
}

// With a restricting table, a later task's design takes each earlier best's nearest row, and a
// best whose nearest row the task has taken is evaluated. Task b's rows are 0.1, 0.5 and 0.9;
// the bests, the most recent first: task a's 1.0, then the warm tasks' 0.95 and 0.05. The first
// trial takes 0.9 (for 1.0); then 0.95 stands as 0.9 too, so the second takes 0.1 (for 0.05).
// Before, the second earlier-best trial took the first best's next row, 0.5.
TEST(TableRowsTest, a_later_tasks_design_takes_each_earlier_bests_nearest_row_once) {
  lbo::testing::ScratchDir dir;
  lbo::testing::write_text(dir.path() / "evals.csv", "task,x,y\na,0.0,0\na,1.0,4\nb,0.1,1\nb,0.5,2\nb,0.9,3\n");
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      "name = \"t\"\nseed = 3\n[objective]\ntable = \"evals.csv\"\ntable_objective = \"y\"\ntable_restrict = true\n"
      "direction = \"maximize\"\n[policy]\nsurrogate = \"lbo\"\ninitial_random = 3\ntransfer_best = 3\n"
      "transfer_best_choice = \"recent\"\n"
      "[space]\nx = { type = \"float\", low = 0, high = 1 }\n"
      "[[tasks]]\nname = \"a\"\nbudget = 2\n[[tasks]]\nname = \"b\"\nbudget = 3\n",
      dir.path());
  RunState state = lbo::testing::started_state(job);
  for (double x : {0.0, 1.0}) {
    lbo::testing::end_attempt(state, lbo::testing::start_trial(state, 0, Config{{x}}), lbo::testing::ok_with(x));
  }
  const std::vector<WarmTask> warm = {{"old:low", {Config{{0.05}}, Config{{0.6}}}, {2.0, 1.0}, lbo::jobs::Direction::maximize},
                                      {"old:high", {Config{{0.95}}, Config{{0.4}}}, {2.0, 1.0}, lbo::jobs::Direction::maximize}};
  const InitialDesign design(job, warm);
  const auto take = [&](const Config& c) {
    lbo::testing::end_attempt(state, lbo::testing::start_trial(state, 1, c, "local:0", ProposalSource::earlier_best),
                              lbo::testing::ok_with(1));
  };
  const std::optional<Config> first = design.earlier_best(state, 1);
  ASSERT_TRUE(first);
  EXPECT_EQ(x_of(*first), 0.9) << "task a's best, 1.0, stands as b's row 0.9";
  take(*first);
  const std::optional<Config> second = design.earlier_best(state, 1);
  ASSERT_TRUE(second);
  EXPECT_EQ(x_of(*second), 0.1) << "0.95 stands as the taken 0.9: the next best, 0.05, not 1.0's next row";
  take(*second);
  EXPECT_FALSE(design.earlier_best(state, 1)) << "every best is evaluated; the design's third trial is random";
}
