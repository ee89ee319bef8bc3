#include "lbo/orchestrator/run_state.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

using namespace lbo::orchestrator;
using lbo::testing::end_attempt;
using lbo::testing::start_again;
using lbo::testing::start_trial;
using lbo::workers::Outcome;
using lbo::workers::TrialStatus;

namespace {

Outcome with(TrialStatus status, double objective = 0) {
  Outcome o;
  o.status = status;
  o.objective = objective;
  return o;
}

const std::string kTwoTasks = "[[tasks]]\nname = \"a\"\nbudget = 2\n[[tasks]]\nname = \"b\"\nbudget = 3\n";

}  // namespace

TEST(RunStateTest, best_follows_the_direction_and_ignores_failures) {
  lbo::testing::ScratchDir dir;
  for (const char* direction : {"maximize", "minimize"}) {
    std::string text = lbo::testing::test_job();
    text.replace(text.find("maximize"), 8, direction);
    const auto job = lbo::testing::job_from(text, dir.path());
    RunState state = lbo::testing::started_state(job);
    const double values[] = {0.5, 0.9, 0.1, 0.7};
    for (double v : values) start_trial(state, 0, lbo::jobs::Config{{v}});
    end_attempt(state, 0, with(TrialStatus::ok, 0.5));
    end_attempt(state, 1, with(TrialStatus::ok, 0.9));
    end_attempt(state, 2, with(TrialStatus::ok, 0.1));
    end_attempt(state, 3, with(TrialStatus::failed, 100));
    const bool maximize = std::string(direction) == "maximize";
    EXPECT_EQ(*state.best_objective(0), maximize ? 0.9 : 0.1) << direction;
    EXPECT_EQ(*state.tasks()[0].best_trial, maximize ? 1 : 2);
    EXPECT_EQ(state.tasks()[0].ok, 3);
    EXPECT_EQ(state.tasks()[0].finished, 4);
    EXPECT_EQ(state.tasks()[0].failed(), 1);
  }
}

// An ok trial outside a limit of [[constraints]] is infeasible: counted ok, never the best. A
// resume whose job file states other limits judges every trial by them, and the bests with it;
// a state rebuilt from a checkpoint judges as the journal did.
TEST(RunStateTest, an_infeasible_trial_is_never_the_best_and_new_limits_judge_anew) {
  lbo::testing::ScratchDir dir;
  lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  job.constraints = {lbo::jobs::Constraint{"mem", std::nullopt, 16.0}};
  RunState state = lbo::testing::started_state(job);
  const std::pair<double, const char*> results[] = {{0.9, R"({"mem": 20})"}, {0.5, R"({"mem": 16})"}, {0.7, R"({"mem": 3})"}};
  for (const auto& [value, metrics] : results) {
    const std::int64_t id = start_trial(state, 0, lbo::jobs::Config{{value}});
    lbo::workers::Outcome o = with(TrialStatus::ok, value);
    o.metrics_json = metrics;
    end_attempt(state, id, o);
  }
  EXPECT_TRUE(state.trial(0).infeasible);
  EXPECT_FALSE(state.trial(1).infeasible);
  EXPECT_EQ(*state.tasks()[0].best_trial, 2) << "the best feasible, not the best";
  EXPECT_EQ(state.tasks()[0].ok, 3);
  EXPECT_EQ(state.tasks()[0].infeasible, 1);
  EXPECT_EQ(state.tasks()[0].failed(), 0);
  const RunState rebuilt(state.job(), state.trials(), {}, {}, true);
  EXPECT_EQ(*rebuilt.tasks()[0].best_trial, 2);
  EXPECT_EQ(rebuilt.tasks()[0].infeasible, 1);
  // Resumed under mem >= 10: trial 2 is out, trials 0 and 1 in.
  job.constraints = {lbo::jobs::Constraint{"mem", 10.0, std::nullopt}};
  state.apply(lbo::orchestrator::RunStarted{"test", 1, 1, lbo::orchestrator::JobIdentity::of(job)});
  EXPECT_FALSE(state.trial(0).infeasible);
  EXPECT_TRUE(state.trial(2).infeasible);
  EXPECT_EQ(*state.tasks()[0].best_trial, 0);
  EXPECT_EQ(state.tasks()[0].infeasible, 1);
  // Without limits every ok trial is feasible.
  job.constraints.clear();
  state.apply(lbo::orchestrator::RunStarted{"test", 2, 1, lbo::orchestrator::JobIdentity::of(job)});
  EXPECT_EQ(state.tasks()[0].infeasible, 0);
  EXPECT_EQ(*state.tasks()[0].best_trial, 0);
}

TEST(RunStateTest, several_objectives_keep_each_tasks_pareto_set_and_a_best_that_no_trial_dominates) {
  lbo::testing::ScratchDir dir;
  lbo::jobs::JobSpec job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  using lbo::jobs::Direction;
  job.objective.several = {lbo::jobs::Objective(Direction::maximize, "auc"), lbo::jobs::Objective(Direction::minimize, "s")};
  job.objective.reference = {std::nan(""), std::nan("")};
  job.objective.direction = Direction::maximize;
  job.constraints = {lbo::jobs::Constraint{"mem", std::nullopt, 16.0}};
  RunState state = lbo::testing::started_state(job);
  ASSERT_TRUE(state.several_objectives());
  // (auc, s): 0 and 1 trade off; 2 is dominated by 1; 3 ties 1's auc at more seconds
  // (dominated); 4 is infeasible; 5 ties 0's auc and dominates it; 6 fails.
  const struct {
    double auc, s;
    const char* metrics;
    TrialStatus status;
  } results[] = {{0.9, 30, "{}", TrialStatus::ok}, {0.8, 10, "{}", TrialStatus::ok}, {0.7, 20, "{}", TrialStatus::ok},
                 {0.8, 12, "{}", TrialStatus::ok}, {0.99, 1, R"({"mem": 20})", TrialStatus::ok},
                 {0.9, 25, "{}", TrialStatus::ok}, {0, 0, "{}", TrialStatus::failed}};
  for (const auto& r : results) {
    const std::int64_t id = start_trial(state, 0, lbo::jobs::Config{{r.auc}});
    lbo::workers::Outcome o = with(r.status, r.auc);
    if (r.status == TrialStatus::ok) o.values = {r.auc, r.s};
    o.metrics_json = r.metrics;
    end_attempt(state, id, o);
  }
  EXPECT_EQ(state.tasks()[0].pareto, (std::vector<std::int64_t>{1, 5}));
  EXPECT_FALSE(state.on_pareto_front(state.trial(0))) << "5 dominates it";
  EXPECT_TRUE(state.on_pareto_front(state.trial(1)));
  EXPECT_FALSE(state.on_pareto_front(state.trial(4))) << "infeasible";
  EXPECT_EQ(*state.tasks()[0].best_trial, 5) << "of the equal best auc, the one not dominated";
  EXPECT_EQ(state.values_of(state.trial(1)), (std::vector<double>{0.8, 10}));
  EXPECT_TRUE(std::isnan(state.values_of(state.trial(6))[1]));
  // A checkpoint's state says the same.
  const RunState rebuilt(state.job(), state.trials(), {}, {}, true);
  EXPECT_EQ(rebuilt.tasks()[0].pareto, (std::vector<std::int64_t>{1, 5}));
  EXPECT_EQ(*rebuilt.tasks()[0].best_trial, 5);
  // Without the limit, 4 dominates everything.
  job.constraints.clear();
  state.apply(lbo::orchestrator::RunStarted{"test", 1, 1, lbo::orchestrator::JobIdentity::of(job)});
  EXPECT_EQ(state.tasks()[0].pareto, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(*state.tasks()[0].best_trial, 4);
}

TEST(RunStateTest, a_failure_queues_a_retry_and_only_the_final_attempt_counts) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 1\n"), dir.path());
  RunState state = lbo::testing::started_state(job);
  start_trial(state, 0, lbo::jobs::Config{{0.5}});
  EXPECT_EQ(state.running_count(), 1);
  end_attempt(state, 0, with(TrialStatus::crashed), "local:0", false);
  EXPECT_EQ(state.running_count(), 0);
  EXPECT_EQ(state.retries(), std::vector<std::int64_t>{0});
  EXPECT_EQ(state.trial(0).failed_attempts, 1);
  EXPECT_FALSE(state.all_budgets_done());
  EXPECT_FALSE(state.best_objective(0).has_value());
  start_again(state, 0, "local:1");
  EXPECT_TRUE(state.retries().empty()) << "a started attempt leaves the queue";
  EXPECT_EQ(state.trial(0).attempts, 2);
  end_attempt(state, 0, with(TrialStatus::ok, 2), "local:1", true);
  EXPECT_TRUE(state.all_budgets_done());
  EXPECT_EQ(state.trial(0).worker, "local:1");
  EXPECT_TRUE(state.anomalies().empty());
  // A finished trial never runs again: a record that says otherwise is noted and ignored.
  start_again(state, 0, "local:0");
  EXPECT_EQ(state.running_count(), 0);
  EXPECT_EQ(state.trial(0).attempts, 2);
  ASSERT_EQ(state.anomalies().size(), 1u);
  EXPECT_NE(state.anomalies()[0].find("after its final result"), std::string::npos) << state.anomalies()[0];
}

TEST(RunStateTest, cancelled_attempts_and_lbo_errors_run_again_first_without_using_a_retry) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState state = lbo::testing::started_state(job);
  for (int i = 0; i < 3; ++i) start_trial(state, i < 2 ? 0 : 1, lbo::jobs::Config{{0.1 * i}});
  end_attempt(state, 2, with(TrialStatus::lbo_error), "local:0", false);
  end_attempt(state, 0, with(TrialStatus::cancelled), "local:0", false);
  end_attempt(state, 1, with(TrialStatus::failed), "local:0", false);
  EXPECT_EQ(state.interrupted(), (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(state.retries(), std::vector<std::int64_t>{1});
  EXPECT_EQ(state.trial(0).failed_attempts, 0);
  EXPECT_EQ(state.trial(2).failed_attempts, 0);
  EXPECT_EQ(state.trial(1).failed_attempts, 1);
  EXPECT_EQ(state.tasks()[0].created, 2);
  EXPECT_EQ(state.tasks()[1].created, 1);
  EXPECT_EQ(state.task_trials(0), (std::vector<std::int64_t>{0, 1}));
}

TEST(RunStateTest, a_stop_turns_running_attempts_into_interrupted_trials_in_id_order) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState state = lbo::testing::started_state(job);
  for (int i = 0; i < 4; ++i) start_trial(state, 1, lbo::jobs::Config{{0.1 * i}});
  end_attempt(state, 3, with(TrialStatus::cancelled), "local:0", false);
  end_attempt(state, 1, with(TrialStatus::ok, 1));
  state.stop_running();
  EXPECT_EQ(state.interrupted(), (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(state.running_count(), 0);
}

TEST(RunStateTest, the_state_a_checkpoint_holds_equals_the_replayed_one) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState live = lbo::testing::started_state(job);
  for (int i = 0; i < 4; ++i) start_trial(live, i % 2, lbo::jobs::Config{{0.2 * i}});
  end_attempt(live, 0, with(TrialStatus::ok, 3));
  end_attempt(live, 1, with(TrialStatus::failed), "local:0", false);
  end_attempt(live, 2, with(TrialStatus::cancelled), "local:0", false);
  const RunState restored(live.job(), live.trials(), live.retries(), live.interrupted());
  for (int task = 0; task < 2; ++task) {
    EXPECT_EQ(restored.tasks()[task].created, live.tasks()[task].created);
    EXPECT_EQ(restored.tasks()[task].finished, live.tasks()[task].finished);
    EXPECT_EQ(restored.tasks()[task].ok, live.tasks()[task].ok);
    EXPECT_EQ(restored.tasks()[task].best_trial, live.tasks()[task].best_trial);
    EXPECT_EQ(restored.task_trials(task), live.task_trials(task));
  }
  EXPECT_EQ(restored.retries(), live.retries());
  EXPECT_EQ(restored.interrupted(), live.interrupted());
  EXPECT_EQ(restored.running_count(), 1);
}

TEST(RunStateTest, a_result_whose_start_record_is_lost_still_counts) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState state = lbo::testing::started_state(job);
  start_trial(state, 0, lbo::jobs::Config{{0.1}});
  // Trial 1's TrialStarted is lost; trial 2's survives; so does trial 1's result.
  state.apply(TrialStarted{2, 1, 1, lbo::jobs::Config{{0.3}}, "local:1", 0});
  EXPECT_TRUE(state.trial(1).lost()) << "a gap in the ids is a lost trial until a record names it";
  EXPECT_EQ(state.tasks()[0].created, 1);
  state.apply(TrialFinished{1, 1, true, with(TrialStatus::ok, 7), "local:0", 0, 0, lbo::jobs::Config{{0.2}}});
  EXPECT_FALSE(state.trial(1).lost());
  EXPECT_TRUE(state.trial(1).finished);
  EXPECT_EQ(state.trial(1).config, (lbo::jobs::Config{{0.2}}));
  EXPECT_EQ(state.task_trials(0), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(state.tasks()[0].ok, 1);
  EXPECT_EQ(*state.tasks()[0].best_trial, 1);
  EXPECT_EQ(state.anomalies().size(), 1u);
  // An old result record (no task) of a trial nothing else names cannot be placed.
  state.apply(TrialFinished{5, 1, true, with(TrialStatus::ok, 1), "local:0", 0});
  EXPECT_TRUE(state.trial(5).lost());
  EXPECT_TRUE(state.trial(3).lost());
  EXPECT_FALSE(state.trial(5).finished);
  EXPECT_EQ(state.next_trial_id(), 6) << "a lost trial's id is never reused";
  EXPECT_EQ(state.tasks()[0].finished + state.tasks()[1].finished, 1);
}

// The progress line's share of model proposals: nothing to say before the model proposes
// (issue 31: "model 100%" during the initial design, whose earlier tasks' best configurations
// were counted as the model's), then the model's share of what it was to propose.
TEST(RunStateTest, the_model_share_starts_after_the_initial_design) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  EXPECT_EQ(model_share(state), "");
  start_trial(state, 0, lbo::jobs::Config{{0.1}}, "local:0", ProposalSource::earlier_best);
  start_trial(state, 0, lbo::jobs::Config{{0.2}}, "local:0", ProposalSource::initial);
  EXPECT_EQ(model_share(state), "initial design");
  for (int i = 0; i < 3; ++i) start_trial(state, 0, lbo::jobs::Config{{0.3}}, "local:0", ProposalSource::model);
  start_trial(state, 0, lbo::jobs::Config{{0.4}}, "local:0", ProposalSource::random_fallback);
  EXPECT_EQ(model_share(state), "model 75% (1 random-fallback)");
}

namespace {

// One task of 10 trials and 12 steps under asha (max_step 9), two trials started, the first
// reported at steps 1, 2 and 3; report(id, step) applies a report.
struct StepBudget {
  StepBudget() {
    start_trial(state, 0, lbo::jobs::Config{{0.1}});
    start_trial(state, 0, lbo::jobs::Config{{0.2}});
    for (int step = 1; step <= 3; ++step) report(0, step);
  }
  lbo::testing::ScratchDir dir;
  lbo::jobs::JobSpec job = lbo::testing::job_from(
      lbo::testing::test_job("", "[early_stopping]\nrule = \"asha\"\nmax_step = 9\n[[tasks]]\nname = \"a\"\nbudget = 10\nbudget_steps = 12\n"),
      dir.path());
  RunState state = lbo::testing::started_state(job);
  void report(std::int64_t id, std::int64_t step) {
    state.apply(TrialsReported{{{id, state.trial(id).attempts, step, 0.1 * static_cast<double>(step), "{}", 1}}, 0});
  }
};

}  // namespace

// A task's resource is the steps its trials reported: a retry's from the start again, a
// promoted attempt's past where its trial was paused. Spent, it takes no new trial and is done
// once its trials are; a checkpoint's state counts the same.
TEST(RunStateTest, a_budget_in_steps_ends_a_task_once_its_trials_spent_it_and_ended) {
  StepBudget run;
  RunState& state = run.state;
  const auto report = [&](std::int64_t id, std::int64_t step) { run.report(id, step); };
  EXPECT_EQ(state.tasks()[0].steps, 3);
  end_attempt(state, 0, with(TrialStatus::failed), "local:0", false);
  start_again(state, 0);
  report(0, 1);
  report(0, 2);
  EXPECT_EQ(state.tasks()[0].steps, 5) << "a retry starts again: its steps count anew";
  report(1, 1);
  Outcome paused = with(TrialStatus::paused, 0.1);
  paused.last_step = 1;
  end_attempt(state, 1, paused, "local:1", false);
  EXPECT_EQ(state.paused(), (std::vector<std::int64_t>{1}));
  start_again(state, 1);
  report(1, 2);
  report(1, 3);
  EXPECT_EQ(state.tasks()[0].steps, 8) << "a promoted attempt counts past where it was paused";
  EXPECT_TRUE(state.accepts_trials(0));
  for (int step = 4; step <= 7; ++step) report(1, step);
  EXPECT_EQ(state.tasks()[0].steps, 12);
  EXPECT_FALSE(state.steps_left(0));
  EXPECT_FALSE(state.accepts_trials(0)) << "2 of 10 trials, but 12 of 12 steps";
  EXPECT_FALSE(state.task_done(0)) << "its trials still run";
  const RunState restored(state.job(), state.trials(), state.retries(), state.interrupted());
  EXPECT_EQ(restored.tasks()[0].steps, 12);
  EXPECT_EQ(restored.job().tasks[0].budget_steps, 12);
  end_attempt(state, 0, with(TrialStatus::ok, 0.2));
  EXPECT_FALSE(state.all_budgets_done());
  end_attempt(state, 1, with(TrialStatus::ok, 0.7));
  EXPECT_TRUE(state.task_done(0));
  EXPECT_TRUE(state.all_budgets_done());
}

// A trial stopped for good counts toward budget_steps up to the step it was stopped at: the
// reports that came after (the objective went on until the stop reached it) depend on timing,
// and counted, a --sync run's task would end after a different trial each time. Live and
// restored from a checkpoint alike; the steps it spent still count them all.
TEST(RunStateTest, a_stopped_trial_counts_its_steps_up_to_the_stop_toward_the_budget) {
  StepBudget run;
  RunState& state = run.state;
  const auto report = [&](std::int64_t id, std::int64_t step) { run.report(id, step); };
  report(1, 1);
  EXPECT_EQ(state.tasks()[0].steps, 4);
  Outcome stopped = with(TrialStatus::stopped, 0.1);
  stopped.last_step = 1;
  end_attempt(state, 0, stopped);
  EXPECT_EQ(state.tasks()[0].steps, 2) << "trial 0 was stopped at step 1; its steps 2 and 3 came before the stop reached it";
  EXPECT_EQ(state.trial(0).steps_spent(), 3);
  const RunState restored(state.job(), state.trials(), state.retries(), state.interrupted());
  EXPECT_EQ(restored.tasks()[0].steps, 2);
  for (int step = 2; step <= 9; ++step) report(1, step);
  end_attempt(state, 1, with(TrialStatus::ok, 0.9));
  EXPECT_EQ(state.tasks()[0].steps, 10);
  EXPECT_TRUE(state.accepts_trials(0)) << "10 of 12 steps: reports past trial 0's stop would have made 12";
}

// A --sync round is handed out whole before any of its attempts reports or ends: a round whose
// trials have only started may have been cut short by a master killed while handing it out.
TEST(RunStateTest, a_round_counts_as_handed_out_once_an_attempt_of_it_reports_or_ends) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 9\n"), dir.path());
  RunState state = lbo::testing::started_state(job);
  EXPECT_TRUE(state.round_handed_out()) << "before any round";
  start_trial(state, 0, lbo::jobs::Config{{0.1}});
  start_trial(state, 0, lbo::jobs::Config{{0.2}});
  EXPECT_FALSE(state.round_handed_out());
  state.apply(TrialsReported{{{1, 1, 1, 0.5, "{}", 0.1}}, 0});
  EXPECT_TRUE(state.round_handed_out()) << "a report";
  end_attempt(state, 0, with(TrialStatus::ok, 0.1));
  start_trial(state, 0, lbo::jobs::Config{{0.3}});
  EXPECT_TRUE(state.round_handed_out()) << "trial 1 still runs: the same round";
  end_attempt(state, 1, with(TrialStatus::ok, 0.2));
  end_attempt(state, 2, with(TrialStatus::ok, 0.3));
  start_trial(state, 0, lbo::jobs::Config{{0.4}});
  EXPECT_FALSE(state.round_handed_out()) << "a new round";
  // A checkpoint keeps it (a checkpoint older than the fact says it was: see Checkpoint v2).
  const RunState restored(state.job(), state.trials(), state.retries(), state.interrupted(), state.round_handed_out());
  EXPECT_FALSE(restored.round_handed_out());
  state.stop_running();
  EXPECT_FALSE(state.round_handed_out()) << "a kill: the resumed run hands out the rest";
  end_attempt(state, 3, with(TrialStatus::cancelled), "local:0", false);
  EXPECT_FALSE(state.round_handed_out()) << "an attempt that no longer ran ends nothing of the round";
  // A round handed out whole, killed after a result: its trials that run again continue it.
  start_again(state, 3);
  start_trial(state, 0, lbo::jobs::Config{{0.5}});
  end_attempt(state, 3, with(TrialStatus::ok, 0.4));
  ASSERT_TRUE(state.round_handed_out());
  state.stop_running();
  ASSERT_EQ(state.interrupted(), std::vector<std::int64_t>{4});
  start_again(state, 4);
  EXPECT_TRUE(state.round_handed_out()) << "a rerun is no new round";
}

// Recovery after a kill: an attempt that was running when the master died ends as a stop's
// cancel would end it. Its trial is not "paused" for a pause of an earlier attempt, and a
// pause journaled for it now takes it off the list of trials to run again.
TEST(RunStateTest, a_running_attempt_stopped_by_recovery_is_no_longer_its_earlier_attempts_pause) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  start_trial(state, 0, lbo::jobs::Config{{0.5}});
  state.apply(TrialsReported{{{0, 1, 1, 0.5, "{}", 0.1}}, 0});
  Outcome paused = with(TrialStatus::paused, 0.5);
  paused.last_step = 1;
  end_attempt(state, 0, paused, "local:0", false);
  ASSERT_TRUE(state.trial(0).paused());
  start_again(state, 0);  // promoted
  state.apply(TrialsReported{{{0, 2, 3, 0.7, "{}", 0.2}}, 0});
  state.stop_running();
  EXPECT_EQ(state.interrupted(), std::vector<std::int64_t>{0});
  EXPECT_FALSE(state.trial(0).paused());
  EXPECT_EQ(state.trial(0).outcome.status, TrialStatus::cancelled);
  ASSERT_TRUE(state.trial(0).report_at(3, true)) << "its report at step 3 counts: no pause cuts it at step 1";
  EXPECT_EQ(state.trial(0).report_at(3, true)->value, 0.7);
  Outcome again = with(TrialStatus::paused, 0.7);
  again.last_step = 3;
  end_attempt(state, 0, again, "local:0", false);
  EXPECT_TRUE(state.interrupted().empty());
  EXPECT_EQ(state.paused(), std::vector<std::int64_t>{0});
  EXPECT_TRUE(state.trial(0).paused());
}

// A paused trial that its task ends `stopped` later ran no attempt since its pause: its times are
// the pause's (the report's utilization once counted the slot busy until the task ended). Its
// steps are those it ran: a batch of reports may go past the step it was judged at.
TEST(RunStateTest, a_paused_trial_ended_later_keeps_its_attempts_times_and_the_steps_it_ran) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job(), dir.path());
  RunState state = lbo::testing::started_state(job);
  state.apply(TrialStarted{0, 0, 1, lbo::jobs::Config{{0.5}}, "local:0", 100.0, ProposalSource::initial, ""});
  state.apply(TrialsReported{{{0, 1, 1, 0.5, "{}", 0.1}, {0, 1, 2, 0.6, "{}", 0.2}, {0, 1, 3, 0.7, "{}", 0.3}}, 101.0});
  Outcome paused = with(TrialStatus::paused, 0.5);
  paused.last_step = 1;  // judged at its rung, step 1
  const Trial& t = state.trial(0);
  state.apply(TrialFinished{0, 1, false, paused, "local:0", 101.4, 0, t.config, t.proposed_by, ""});
  EXPECT_EQ(state.trial(0).finished_unix, 101.4);
  EXPECT_EQ(state.trial(0).steps_run(), 3) << "it reported 3 steps in one batch before the pause reached it";
  Outcome stopped = with(TrialStatus::stopped, 0.5);
  stopped.last_step = 1;
  state.apply(TrialFinished{0, 1, true, stopped, "local:0", 121.0, 0, t.config, t.proposed_by, ""});
  EXPECT_TRUE(state.trial(0).finished);
  EXPECT_EQ(state.trial(0).started_unix, 100.0);
  EXPECT_EQ(state.trial(0).finished_unix, 101.4) << "the stop at 121 s ended no attempt";
  EXPECT_EQ(state.trial(0).steps_run(), 3);
}

// Final results are numbered in journal order (Trial::final_seq), and a trial knows how many there
// were when its first attempt started (Trial::finals_before); a rerun keeps it. A state rebuilt
// from its trials (a checkpoint) numbers the next result after them.
TEST(RunStateTest, final_results_are_numbered_and_a_trial_knows_how_many_came_before_it) {
  lbo::testing::ScratchDir dir;
  const auto job = lbo::testing::job_from(lbo::testing::test_job("", kTwoTasks), dir.path());
  RunState state = lbo::testing::started_state(job);
  start_trial(state, 0, lbo::jobs::Config{{0.1}});
  start_trial(state, 0, lbo::jobs::Config{{0.2}});
  EXPECT_EQ(state.trial(0).finals_before, 0);
  EXPECT_EQ(state.trial(1).finals_before, 0);
  end_attempt(state, 1, with(TrialStatus::ok, 1));
  end_attempt(state, 0, with(TrialStatus::cancelled), "local:0", false);  // runs again: not final
  EXPECT_EQ(state.trial(1).final_seq, 0);
  EXPECT_EQ(state.trial(0).final_seq, -1);
  start_trial(state, 1, lbo::jobs::Config{{0.3}});
  EXPECT_EQ(state.trial(2).finals_before, 1);
  start_again(state, 0);
  EXPECT_EQ(state.trial(0).finals_before, 0) << "its first attempt's";
  end_attempt(state, 2, with(TrialStatus::failed));
  end_attempt(state, 0, with(TrialStatus::ok, 2));
  EXPECT_EQ(state.trial(2).final_seq, 1);
  EXPECT_EQ(state.trial(0).final_seq, 2);
  RunState restored(state.job(), state.trials(), state.retries(), state.interrupted());
  start_trial(restored, 1, lbo::jobs::Config{{0.4}});
  EXPECT_EQ(restored.trial(3).finals_before, 3);
  end_attempt(restored, 3, with(TrialStatus::ok, 3));
  EXPECT_EQ(restored.trial(3).final_seq, 3);
}
