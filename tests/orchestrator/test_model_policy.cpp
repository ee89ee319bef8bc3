#include "lbo/orchestrator/model_policy.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numbers>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include "failure_model.hpp"
#include "run_job.hpp"

using namespace lbo::orchestrator;
using lbo::testing::Row;
using lbo::testing::run_job;
using lbo::testing::RunOutput;
using lbo::testing::ok_with;
namespace fs = std::filesystem;

namespace {

constexpr double kBraninMinimum = 0.397887357729739;

// Branin on [-5, 10] × [0, 15], minimized, one slot, --sync.
std::string branin_job(const std::string& policy, int seed, int budget = 40) {
  return "name = \"branin\"\nseed = " + std::to_string(seed) + "\n[objective]\ncommand = [\"" + LBO_TEST_OBJECTIVE +
         "\", \"--function\", \"branin\"]\ndirection = \"minimize\"\n[policy]\n" + policy +
         "\n[space]\nx1 = { type = \"float\", low = -5, high = 10 }\nx2 = { type = \"float\", low = 0, high = 15 }\n"
         "[[tasks]]\nname = \"b\"\nbudget = " +
         std::to_string(budget) + "\n";
}

double best_objective(const RunOutput& out, const std::string& task = "") {
  double best = std::numeric_limits<double>::infinity();
  for (const Row& row : out.rows) {
    if (row.at("status") == "ok" && (task.empty() || row.at("task") == task)) best = std::min(best, std::stod(row.at("objective")));
  }
  return best;
}

MasterOptions sync_mode() {
  MasterOptions options;
  options.sync = true;
  return options;
}

// The quadratic family of the ABLR paper (§3.1): f(x) = ½a‖x‖² + bΣx + 3c on [-5, 5]³.
struct Quadratic {
  double a, b, c;
  double minimum() const {  // separable: each coordinate at clamp(−b/a, −5, 5)
    const double x = std::clamp(-b / a, -5.0, 5.0);
    return 3 * (0.5 * a * x * x + b * x) + 3 * c;
  }
};

}  // namespace

TEST(ModelPolicyTest, gp_ucb_and_ei_reach_branin_regret_below_half_where_random_mostly_does_not) {
  lbo::testing::ScratchDir dir;
  std::map<std::string, int> successes;
  std::map<std::string, double> total_regret;
  const std::map<std::string, std::string> policies = {{"gp-ucb", "surrogate = \"gp\"\nacquisition = \"ucb\""},
                                                       {"gp-ei", "surrogate = \"gp\"\nacquisition = \"ei\""},
                                                       {"random", "surrogate = \"random\""}};
  for (const auto& [name, policy] : policies) {
    for (int seed = 1; seed <= 10; ++seed) {
      const RunOutput out = run_job(branin_job(policy, seed), dir, 1, sync_mode(),
                                    dir.path() / (name + "-" + std::to_string(seed)));
      ASSERT_EQ(out.exit_code, kExitDone) << out.log;
      ASSERT_EQ(out.rows.size(), 40u);
      const double regret = best_objective(out) - kBraninMinimum;
      successes[name] += regret < 0.5 ? 1 : 0;
      total_regret[name] += regret;
    }
  }
  EXPECT_GE(successes["gp-ucb"], 8);
  EXPECT_GE(successes["gp-ei"], 8);
  EXPECT_LE(successes["random"], 5);
  EXPECT_LT(total_regret["gp-ucb"], 0.2 * total_regret["random"]);
  EXPECT_LT(total_regret["gp-ei"], 0.2 * total_regret["random"]);
}

TEST(ModelPolicyTest, ablr_transfers_across_quadratic_tasks_better_than_random) {
  lbo::testing::ScratchDir dir;
  // Six tasks drawn from the family, each a "dataset" file the objective reads (a, b, c) from.
  std::mt19937_64 rng(2018);
  std::uniform_real_distribution<double> u(0.1, 10.0);
  std::vector<Quadratic> tasks;
  std::string task_tables;
  for (int t = 0; t < 6; ++t) {
    tasks.push_back({u(rng), u(rng), u(rng)});
    std::ofstream(dir.path() / ("q" + std::to_string(t) + ".json"))
        << "{\"a\": " << tasks.back().a << ", \"b\": " << tasks.back().b << ", \"c\": " << tasks.back().c << "}";
    task_tables += "[[tasks]]\nname = \"q" + std::to_string(t) + "\"\ndataset = \"q" + std::to_string(t) + ".json\"\nbudget = 12\n";
  }
  const auto job = [&](const std::string& surrogate, int seed) {
    return "name = \"quadratic\"\nseed = " + std::to_string(seed) + "\n[objective]\ncommand = [\"" + LBO_TEST_OBJECTIVE +
           "\", \"--function\", \"quadratic\", \"--context\", \"{dataset}\"]\ndirection = \"minimize\"\n[policy]\n"
           "surrogate = \"" + surrogate + "\"\nacquisition = \"ei\"\ninitial_random = 3\n[space]\n"
           "x1 = { type = \"float\", low = -5, high = 5 }\nx2 = { type = \"float\", low = -5, high = 5 }\n"
           "x3 = { type = \"float\", low = -5, high = 5 }\n" + task_tables;
  };
  // Simple regret summed over the tasks that have earlier tasks to learn from (t ≥ 1), per seed.
  // Twelve seeds: one seed's sum varies by a factor of 3 (ablr 24-83, random 70-174, measured),
  // and the first four gave 0.51 when compiled for x86-64-v3, where the baseline build passed.
  constexpr int kSeeds = 12;
  std::map<std::string, std::vector<double>> regret;
  for (const std::string surrogate : {"ablr", "random"}) {
    for (int seed = 1; seed <= kSeeds; ++seed) {
      const RunOutput out = run_job(job(surrogate, seed), dir, 1, sync_mode(), dir.path() / (surrogate + std::to_string(seed)));
      ASSERT_EQ(out.exit_code, kExitDone) << out.log;
      EXPECT_EQ(out.log.find("model fit failed"), std::string::npos) << out.log;
      double sum = 0;
      for (int t = 1; t < 6; ++t) sum += best_objective(out, "q" + std::to_string(t)) - tasks[t].minimum();
      regret[surrogate].push_back(sum);
    }
  }
  const auto total = [&](const std::string& surrogate) {
    return std::accumulate(regret[surrogate].begin(), regret[surrogate].end(), 0.0);
  };
  int ablr_better = 0;
  for (int k = 0; k < kSeeds; ++k) ablr_better += regret["ablr"][k] < regret["random"][k];
  std::printf("summed regret on tasks 1-5 over %d seeds: ablr %.2f, random %.2f; ablr better in %d\n", kSeeds,
              total("ablr"), total("random"), ablr_better);
  EXPECT_LT(total("ablr"), 0.5 * total("random"));
  EXPECT_GE(ablr_better, kSeeds - 2);
}

TEST(ModelPolicyTest, sync_runs_with_a_fixed_seed_are_reproducible_exactly) {
  lbo::testing::ScratchDir dir;
  // Three slots, so rounds hold several hallucinated proposals; hedge, so its random draws count.
  const std::string job = branin_job("surrogate = \"gp\"\nacquisition = \"hedge\"\ninitial_random = 4", 9, 20);
  const RunOutput a = run_job(job, dir, 3, sync_mode(), dir.path() / "a");
  const RunOutput b = run_job(job, dir, 3, sync_mode(), dir.path() / "b");
  ASSERT_EQ(a.rows.size(), 20u);
  ASSERT_EQ(b.rows.size(), a.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    for (const char* column : {"trial", "task", "status", "objective", "x1", "x2"}) {
      EXPECT_EQ(a.rows[i].at(column), b.rows[i].at(column)) << "trial " << i << " " << column;
    }
  }
  // The journals list the trials in the same order.
  std::vector<std::int64_t> order_a, order_b;
  for (const auto& r : a.journal.records) {
    if (const auto* s = std::get_if<TrialStarted>(&r)) order_a.push_back(s->trial);
  }
  for (const auto& r : b.journal.records) {
    if (const auto* s = std::get_if<TrialStarted>(&r)) order_b.push_back(s->trial);
  }
  EXPECT_EQ(order_a, order_b);
}

TEST(ModelPolicyTest, no_two_running_trials_share_a_configuration) {
  lbo::testing::ScratchDir dir;
  // Few distinct (kind, k) pairs, 4 slots, asynchronous: proposals must spread out.
  const std::string job = lbo::testing::test_job(
      "k = { type = \"int\", low = 1, high = 3 }\nkind = { type = \"categorical\", choices = [\"a\", \"b\", \"c\", \"d\"] }\n"
      "sleep_ms = { type = \"int\", low = 10, high = 30 }",
      "[[tasks]]\nname = \"a\"\nbudget = 40\n", "", "surrogate = \"gp\"\nacquisition = \"ucb\"\ninitial_random = 4");
  const RunOutput out = run_job(job, dir, 4);
  ASSERT_EQ(out.exit_code, kExitDone) << out.log;
  // Replay the journal: the configurations running at any moment are distinct.
  std::map<std::int64_t, lbo::jobs::Config> running;
  int checked = 0;
  for (const auto& r : out.journal.records) {
    if (const auto* s = std::get_if<TrialStarted>(&r)) {
      for (const auto& [trial, config] : running) {
        EXPECT_FALSE(config == s->config) << "trial " << s->trial << " duplicates running trial " << trial;
      }
      running[s->trial] = s->config;
      ++checked;
    } else if (const auto* f = std::get_if<TrialFinished>(&r)) {
      running.erase(f->trial);
    }
  }
  EXPECT_EQ(checked, 40);
}

TEST(ModelPolicyTest, failed_trials_stay_out_of_the_model) {
  lbo::testing::ScratchDir dir;
  // A third of the configurations crash and a third print NaN. Were a NaN to reach the GP, its
  // fit would refuse the data and the log would say "model fit failed".
  const std::string job = lbo::testing::test_job(
      "outcome = { type = \"categorical\", choices = [\"ok\", \"nan\", \"crash\"] }",
      "[[tasks]]\nname = \"a\"\nbudget = 25\n", "", "surrogate = \"gp\"\ninitial_random = 6");
  const RunOutput out = run_job(job, dir, 2, sync_mode());
  EXPECT_EQ(out.exit_code, kExitDone) << out.log;
  EXPECT_EQ(out.log.find("model fit failed"), std::string::npos) << out.log;
  std::map<std::string, int> statuses;
  for (const Row& row : out.rows) ++statuses[row.at("status")];
  EXPECT_GT(statuses["ok"], 0);
  EXPECT_GT(statuses["failed"] + statuses["crashed"], 0);
  EXPECT_EQ(out.rows.size(), 25u);
}

TEST(RandomPolicyTest, among_open_tasks_it_picks_each_alike_reproducibly_and_proposes_as_for_that_task) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      branin_job("surrogate = \"random\"", 3) + "[[tasks]]\nname = \"c\"\nbudget = 40\n[[tasks]]\nname = \"d\"\nbudget = 40\n",
      dir.path());
  ASSERT_EQ(job.tasks.size(), 3u);
  RunState state = lbo::testing::started_state(job);
  RandomPolicy policy(job.space, job.seed);
  const std::vector<int> open = {0, 2};  // task 1 has no budget left
  std::map<int, int> picks;
  for (std::int64_t trial = 0; trial < 400; ++trial) {
    const Proposal p = policy.propose_among(state, open, trial);
    ASSERT_TRUE(p.task == 0 || p.task == 2) << "picked task " << p.task;
    ++picks[p.task];
    EXPECT_EQ(p.config, policy.propose(state, p.task, trial));
    const Proposal again = RandomPolicy(job.space, job.seed).propose_among(state, open, trial);
    EXPECT_EQ(again.task, p.task);
    EXPECT_EQ(again.config, p.config);
  }
  // Uniform over the two: 200 expected, standard deviation 10.
  EXPECT_GT(picks[0], 150);
  EXPECT_GT(picks[2], 150);
  // A different seed picks differently.
  int differ = 0;
  for (std::int64_t trial = 0; trial < 50; ++trial) {
    differ += RandomPolicy(job.space, job.seed + 1).propose_among(state, open, trial).task != policy.propose_among(state, open, trial).task;
  }
  EXPECT_GT(differ, 5);
}

TEST(ModelPolicyTest, first_trials_of_each_task_are_random_then_the_model_proposes_and_hedge_learns) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      branin_job("surrogate = \"gp\"\nacquisition = \"hedge\"\ninitial_random = 3", 5), dir.path());
  RunState state = lbo::testing::started_state(job);
  std::vector<HedgeDraw> draws;
  ModelPolicy policy(job, PolicyOptions{true, nullptr, [&draws](const HedgeDraw& d) { draws.push_back(d); }});
  RandomPolicy random(job.space, job.seed);
  // Three random proposals, identical to the random policy's.
  for (std::int64_t id = 0; id < 3; ++id) {
    EXPECT_EQ(policy.propose(state, 0, id), random.propose(state, 0, id));
    EXPECT_EQ(policy.propose_among(state, {0}, id).source, ProposalSource::initial);
    lbo::testing::start_trial(state, 0, policy.propose(state, 0, id));
    lbo::workers::Outcome o;
    o.status = lbo::workers::TrialStatus::ok;
    o.objective = 10.0 + static_cast<double>(id);
    lbo::testing::end_attempt(state, id, o);
  }
  lbo::testing::commit_and_fit(policy, state);
  EXPECT_EQ(policy.fits_completed(), 1u);
  EXPECT_EQ(policy.hedge_gains(0), (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(draws.empty());  // the initial design draws nothing
  const lbo::jobs::Config proposed = policy.propose(state, 0, 3);
  // GP-Hedge's draw is reported: equal gains, equal probabilities.
  ASSERT_EQ(draws.size(), 1u);
  EXPECT_EQ(draws[0].trial, 3);
  EXPECT_EQ(draws[0].over, "acquisition");
  EXPECT_EQ(draws[0].task, job.tasks[0].name);
  EXPECT_EQ(draws[0].options, (std::vector<std::string>{"ucb", "ei", "pi"}));
  for (double p : draws[0].probabilities) EXPECT_DOUBLE_EQ(p, 1.0 / 3);
  EXPECT_LT(draws[0].chosen, 3u);
  EXPECT_EQ(policy.propose_among(state, {0}, 3).source, ProposalSource::model);
  EXPECT_TRUE(job.space.is_valid(proposed));
  EXPECT_FALSE(proposed == random.propose(state, 0, 3));
  // After the next fit, every arm has gained the new posterior mean at its nominee.
  lbo::testing::start_trial(state, 0, proposed);
  lbo::workers::Outcome o;
  o.status = lbo::workers::TrialStatus::ok;
  o.objective = 5.0;
  lbo::testing::end_attempt(state, 3, o);
  lbo::testing::commit_and_fit(policy, state);
  policy.propose(state, 0, 4);
  const std::vector<double> gains = policy.hedge_gains(0);
  ASSERT_EQ(gains.size(), 3u);
  EXPECT_TRUE(std::any_of(gains.begin(), gains.end(), [](double g) { return g != 0; }));
  // The reported probabilities are softmax(η·gains) of the gains the draw used.
  ASSERT_GE(draws.size(), 2u);
  const std::vector<double>& p = draws.back().probabilities;
  const double eta = job.policy.hedge_eta;
  double norm = 0;
  for (double g : gains) norm += std::exp(eta * g);
  for (std::size_t a = 0; a < 3; ++a) EXPECT_NEAR(p[a], std::exp(eta * gains[a]) / norm, 1e-12);
}

TEST(ModelPolicyTest, proposals_do_not_wait_for_a_background_refit) {
  lbo::testing::ScratchDir dir;
  // A wide network on 150 points: the first fit takes far longer than a proposal.
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      branin_job("surrogate = \"ablr\"\ninitial_random = 2\nnetwork_width = 100", 5, 400), dir.path());
  RunState state = lbo::testing::started_state(job);
  std::vector<std::string> log;
  ModelPolicy policy(job, PolicyOptions{false, [&log](const std::string& line) { log.push_back(line); }});
  for (std::int64_t id = 0; id < 150; ++id) {
    lbo::testing::start_trial(state, 0, RandomPolicy(job.space, 1).propose(state, 0, id));
    lbo::workers::Outcome o;
    o.status = lbo::workers::TrialStatus::ok;
    o.objective = *state.trial(id).config.values[0] * *state.trial(id).config.values[1];
    lbo::testing::end_attempt(state, id, o);
  }
  policy.results_committed(state);  // hands the data to the refit thread and returns
  const Proposal during = policy.propose_among(state, {0}, 150);
  EXPECT_EQ(policy.fits_completed(), 0u) << "the proposal waited for the fit";
  EXPECT_TRUE(job.space.is_valid(during.config));
  // Not random: until the background fit covers them, a GP on the task's results proposes, and
  // says so (issue 56: it was labelled "model").
  EXPECT_EQ(during.source, ProposalSource::interim_gp);
  EXPECT_NE(during.note.find("no ablr fit has finished yet"), std::string::npos) << during.note;
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("task b proposes from an interim GP"), std::string::npos) << log[0];
  policy.wait_for_fits(1);
  const Proposal after = policy.propose_among(state, {0}, 151);
  EXPECT_TRUE(job.space.is_valid(after.config));
  EXPECT_EQ(after.source, ProposalSource::model);
  EXPECT_TRUE(after.note.empty());
}

// LBO (default networks) on two identical tasks: the second reuses the first's latent networks
// and comes closer to the optimum in its 8 trials than LBO given the second task alone
// (measured: summed regret 0.013 with the first task, 15.7 alone).
TEST(ModelPolicyTest, lbo_reuses_the_networks_of_an_identical_earlier_task_and_needs_fewer_trials) {
  lbo::testing::ScratchDir dir;
  const Quadratic q{2.0, 3.0, 1.0};
  std::ofstream(dir.path() / "q.json") << "{\"a\": " << q.a << ", \"b\": " << q.b << ", \"c\": " << q.c << "}";
  const auto job = [&](bool with_first, int seed) {
    return "name = \"twins\"\nseed = " + std::to_string(seed) + "\n[objective]\ncommand = [\"" + LBO_TEST_OBJECTIVE +
           "\", \"--function\", \"quadratic\", \"--context\", \"{dataset}\"]\ndirection = \"minimize\"\n[policy]\n"
           "surrogate = \"lbo\"\nacquisition = \"ei\"\ninitial_random = 2\n[space]\nx1 = { type = \"float\", low = -5, high = 5 }\n"
           "x2 = { type = \"float\", low = -5, high = 5 }\n" +
           (with_first ? std::string("[[tasks]]\nname = \"first\"\ndataset = \"q.json\"\nbudget = 25\n") : "") +
           "[[tasks]]\nname = \"second\"\ndataset = \"q.json\"\nbudget = 8\n";
  };
  const double minimum = 2 * (0.5 * q.a * (q.b / q.a) * (q.b / q.a) - q.b * q.b / q.a) + 3 * q.c;
  double regret_with = 0, regret_alone = 0;
  for (int seed = 1; seed <= 3; ++seed) {
    const RunOutput with = run_job(job(true, seed), dir, 1, sync_mode(), dir.path() / ("with" + std::to_string(seed)));
    const RunOutput alone = run_job(job(false, seed), dir, 1, sync_mode(), dir.path() / ("alone" + std::to_string(seed)));
    ASSERT_EQ(with.exit_code, kExitDone) << with.log;
    ASSERT_EQ(alone.exit_code, kExitDone) << alone.log;
    regret_with += best_objective(with, "second") - minimum;
    regret_alone += best_objective(alone, "second") - minimum;
    // The second task shares the first's networks: the expected number of networks both use,
    // the sum over m of q_first(z_m = 1) q_second(z_m = 1), is at least one half (measured 0.90,
    // 1.16, 1.04). Whether one network's usage is above ½ in both is not asked: with 8 trials of
    // the second task a usage near ½ fell on either side of it with the build's rounding (0.499
    // with -ffp-contract=off, above ½ without).
    const std::vector<Row> tasks = lbo::testing::read_csv(with.run_dir / "tasks.csv");
    ASSERT_EQ(tasks.size(), 2u);
    // usage:<m> holds q(z_m = 1); "networks" lists those above ½.
    std::vector<std::vector<double>> usage(2);
    std::string usages;
    for (std::size_t i = 0; i < 2; ++i) {
      const Row& t = tasks[i];
      std::string used;
      usages += "\n  " + t.at("task") + ":";
      for (int m = 0; t.count("usage:" + std::to_string(m)); ++m) {
        usage[i].push_back(std::stod(t.at("usage:" + std::to_string(m))));
        EXPECT_GE(usage[i].back(), 0.0);
        EXPECT_LE(usage[i].back(), 1.0);
        if (usage[i].back() > 0.5) used += (used.empty() ? "" : " ") + std::to_string(m);
        usages += " " + t.at("usage:" + std::to_string(m));
      }
      EXPECT_TRUE(t.count("usage:0"));
      EXPECT_EQ(used, t.at("networks"));
    }
    ASSERT_EQ(usage[0].size(), usage[1].size());
    const double shared = std::inner_product(usage[0].begin(), usage[0].end(), usage[1].begin(), 0.0);
    EXPECT_GE(shared, 0.5) << "seed " << seed << ": networks shared on expectation " << shared
                           << "; usage per network:" << usages;
  }
  std::printf("regret of the second task after 8 trials, summed over 3 seeds: with the first %.3f, alone %.3f\n",
              regret_with, regret_alone);
  EXPECT_LT(regret_with, 0.5 * regret_alone);
}

namespace {

double branin_at(const lbo::jobs::Config& c) {
  const double x1 = *c.values[0], x2 = *c.values[1], pi = std::numbers::pi;
  const double u = x2 - 5.1 / (4 * pi * pi) * x1 * x1 + 5 / pi * x1 - 6;
  return u * u + 10 * (1 - 1 / (8 * pi)) * std::cos(x1) + 10;
}

// Tasks 0 … tasks − 1 of `state` each finish `per_task` random trials on Branin; their bests.
std::vector<lbo::jobs::Config> random_tasks(RunState& state, RandomPolicy& random, int tasks, int per_task) {
  std::vector<lbo::jobs::Config> best(static_cast<std::size_t>(tasks));
  for (int task = 0; task < tasks; ++task) {
    double lowest = 1e9;
    for (int i = 0; i < per_task; ++i) {
      const std::int64_t t = lbo::testing::start_trial(state, task, random.propose(state, task, state.next_trial_id()));
      const double y = branin_at(state.trial(t).config);
      lbo::testing::end_attempt(state, t, ok_with(y));
      if (y < lowest) lowest = y, best[static_cast<std::size_t>(task)] = state.trial(t).config;
    }
  }
  return best;
}

// The encoded distance between two configurations of the Branin box.
double distance(const lbo::jobs::Config& a, const lbo::jobs::Config& b) {
  const double d1 = (*a.values[0] - *b.values[0]) / 15, d2 = (*a.values[1] - *b.values[1]) / 15;
  return std::sqrt(d1 * d1 + d2 * d2);
}

double closest_pair(const std::vector<lbo::jobs::Config>& configs) {
  double closest = 1e9;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) closest = std::min(closest, distance(configs[i], configs[j]));
  }
  return closest;
}

}  // namespace

// Parallel slots between results: each proposal knows the earlier ones are pending
// (hallucinated at the mean), so a wave of proposals spreads out instead of repeating the
// maximizer, and every one of them is the model's.
TEST(ModelPolicyTest, proposals_between_results_spread_out_and_all_come_from_the_model) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(branin_job("surrogate = \"gp\"\ninitial_random = 6", 3, 40), dir.path());
  RunState state = lbo::testing::started_state(job);
  ModelPolicy policy(job, PolicyOptions{true, nullptr});
  for (std::int64_t id = 0; id < 12; ++id) {
    const std::int64_t t = lbo::testing::start_trial(state, 0, policy.propose(state, 0, id));
    lbo::testing::end_attempt(state, t, ok_with(branin_at(state.trial(t).config)));
  }
  lbo::testing::commit_and_fit(policy, state);
  std::vector<lbo::jobs::Config> wave;
  for (std::int64_t id = 12; id < 20; ++id) {
    const Proposal p = policy.propose_among(state, {0}, id);
    EXPECT_EQ(p.source, ProposalSource::model) << "trial " << id;
    wave.push_back(p.config);
    lbo::testing::start_trial(state, 0, p.config, "local:0", p.source);  // pending, no result yet
  }
  EXPECT_GT(closest_pair(wave), 0.01) << "the wave repeats itself";
}

// A transfer model's new task, after its initial design and before a result of its own, proposes
// from what the earlier task taught: `model-prior`, spread out (each proposal knows the earlier
// ones are pending), and where the earlier (here identical) task was good, far better than
// random points would.
TEST(ModelPolicyTest, a_new_tasks_first_wave_comes_from_the_earlier_task) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      branin_job("initial_random = 2\ntransfer_best = 0\nnetworks = 2\nnetwork_width = 16", 4, 30) +
          "[[tasks]]\nname = \"second\"\nbudget = 20\n",
      dir.path());
  ASSERT_EQ(job.policy.surrogate, lbo::jobs::SurrogateKind::lbo);  // the default
  RunState state = lbo::testing::started_state(job);
  ModelPolicy policy(job, PolicyOptions{true, nullptr});
  RandomPolicy random(job.space, 99);
  for (std::int64_t id = 0; id < 30; ++id) {
    const std::int64_t t = lbo::testing::start_trial(state, 0, random.propose(state, 0, id));
    lbo::testing::end_attempt(state, t, ok_with(branin_at(state.trial(t).config)));
  }
  lbo::testing::commit_and_fit(policy, state);
  std::vector<lbo::jobs::Config> wave;
  double wave_mean = 0;
  for (std::int64_t id = 30; id < 40; ++id) {
    const Proposal p = policy.propose_among(state, {1}, id);
    lbo::testing::start_trial(state, 1, p.config, "local:0", p.source);
    if (id < 32) {
      EXPECT_EQ(p.source, ProposalSource::initial) << "trial " << id;  // the task's initial design
      continue;
    }
    EXPECT_EQ(p.source, ProposalSource::model_prior) << "trial " << id;
    wave.push_back(p.config);
    wave_mean += branin_at(p.config) / 8;
  }
  EXPECT_GT(closest_pair(wave), 0.01) << "the wave repeats itself";
  // Random points on Branin average about 54; the prior's should be near the minima (0.4).
  double random_mean = 0;
  for (int i = 0; i < 200; ++i) random_mean += branin_at(random.propose(state, 1, 1000 + i)) / 200;
  EXPECT_LT(wave_mean, 0.25 * random_mean) << "prior wave " << wave_mean << ", random " << random_mean;
}

// A later task starts with what won the earlier ones, the most recent first
// (transfer_best_choice = "recent"; the portfolio order is test_earlier_best's), as part of its
// initial design; a configuration the task has taken already is not proposed again.
TEST(ModelPolicyTest, a_later_task_starts_with_the_earlier_tasks_bests_in_its_design) {
  lbo::testing::ScratchDir dir;
  const std::string tasks = "[[tasks]]\nname = \"second\"\nbudget = 20\n[[tasks]]\nname = \"third\"\nbudget = 20\n";
  for (const std::string surrogate : {"lbo", "ablr", "gp"}) {
    for (const std::string setting : {"", "transfer_best = 1", "transfer_best = 0"}) {
      const lbo::jobs::JobSpec job = lbo::testing::job_from(
          branin_job("surrogate = \"" + surrogate + "\"\ninitial_random = 3\ntransfer_best_choice = \"recent\"\n" + setting, 4, 10) +
              tasks,
          dir.path());
      const std::size_t count = setting.empty() ? (surrogate == "gp" ? 0 : 2) : setting.back() - '0';
      RunState state = lbo::testing::started_state(job);
      ModelPolicy policy(job, PolicyOptions{true, nullptr});
      RandomPolicy random(job.space, 99);
      const std::vector<lbo::jobs::Config> best = random_tasks(state, random, 2, 10);
      const std::string where = surrogate + " [" + setting + "]";
      // With two, task "third" has taken the second task's best already (a resumed run, say):
      // it is skipped for the first task's.
      const auto evaluate = [&](const lbo::jobs::Config& c, ProposalSource source) {
        lbo::testing::end_attempt(state, lbo::testing::start_trial(state, 2, c, "local:0", source), ok_with(branin_at(c)));
      };
      if (count == 2) evaluate(best[1], ProposalSource::initial);
      // The design's 3 trials, then a GP on the task's own 3 results (until the model's fit
      // covers them).
      std::vector<Proposal> firsts;
      for (int i = count == 2 ? 1 : 0; i < 4; ++i) {
        firsts.push_back(policy.propose_among(state, {2}, state.next_trial_id()));
        evaluate(firsts.back().config, firsts.back().source);
      }
      EXPECT_EQ(firsts.back().source, ProposalSource::interim_gp) << where;
      firsts.pop_back();
      std::size_t k = 0;
      if (count >= 1) {
        EXPECT_EQ(firsts[k].source, ProposalSource::earlier_best) << where;
        EXPECT_EQ(firsts[k++].config, count == 2 ? best[0] : best[1]) << where;
      }
      for (; k < firsts.size(); ++k) {
        EXPECT_EQ(firsts[k].source, ProposalSource::initial) << where << " proposal " << k;
        EXPECT_NE(firsts[k].config, best[0]) << where;
        EXPECT_NE(firsts[k].config, best[1]) << where;
      }
    }
  }
}

// Unset, lbo's transfer_best grows with the earlier tasks: half their distinct bests, at least
// 2. A task after 4 earlier ones starts with 2 bests, after 6 with 3 (the most recent first),
// then random points; transfer_best = 2 set in the job keeps 2 after 6, and so does ablr. In the
// recent order, which the test follows.
TEST(ModelPolicyTest, a_later_tasks_design_takes_half_the_earlier_bests_when_they_are_many) {
  lbo::testing::ScratchDir dir;
  for (const auto& [earlier, setting, expected] :
       {std::tuple{4, std::string("surrogate = \"lbo\""), std::size_t{2}},
        std::tuple{6, std::string("surrogate = \"lbo\""), std::size_t{3}},
        std::tuple{6, std::string("surrogate = \"lbo\"\ntransfer_best = 2"), std::size_t{2}},
        std::tuple{6, std::string("surrogate = \"ablr\""), std::size_t{2}}}) {
    std::string tasks;
    for (int t = 1; t <= earlier; ++t) tasks += "[[tasks]]\nname = \"t" + std::to_string(t) + "\"\nbudget = 10\n";
    const lbo::jobs::JobSpec job =
        lbo::testing::job_from(branin_job("initial_random = 5\ntransfer_best_choice = \"recent\"\n" + setting, 4, 10) + tasks, dir.path());
    RunState state = lbo::testing::started_state(job);
    ModelPolicy policy(job, PolicyOptions{true, nullptr});
    RandomPolicy random(job.space, 7);
    const std::vector<lbo::jobs::Config> best = random_tasks(state, random, earlier, 4);
    const std::string where = std::to_string(earlier) + " earlier tasks [" + setting + "]";
    for (std::size_t k = 0; k < 5; ++k) {
      const Proposal p = policy.propose_among(state, {earlier}, state.next_trial_id());
      if (k < expected) {
        EXPECT_EQ(p.source, ProposalSource::earlier_best) << where << " proposal " << k;
        EXPECT_EQ(p.config, best[static_cast<std::size_t>(earlier) - 1 - k]) << where << " proposal " << k;
      } else {
        EXPECT_EQ(p.source, ProposalSource::initial) << where << " proposal " << k;
      }
      lbo::testing::end_attempt(state, lbo::testing::start_trial(state, earlier, p.config, "local:0", p.source),
                                ok_with(branin_at(p.config)));
    }
  }
}

// A task's design covers a model choice before it repeats a family, the earlier tasks' bests
// counted: 4 families, 4 design points (1 earlier best with lbo) name each family once.
TEST(ModelPolicyTest, a_tasks_design_tries_every_model_family_before_repeating_one) {
  lbo::testing::ScratchDir dir;
  for (const std::string surrogate : {"lbo", "gp"}) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const lbo::jobs::JobSpec job = lbo::testing::job_from(
          "name = \"families\"\nseed = " + std::to_string(seed) + "\n[objective]\ncommand = [\"" + std::string(LBO_TEST_OBJECTIVE) +
              "\"]\ndirection = \"maximize\"\n[policy]\nsurrogate = \"" + surrogate + "\"\ninitial_random = 5\n[space]\n"
              "model = { type = \"categorical\", choices = [\"a\", \"b\", \"c\", \"d\"] }\n"
              "xa = { type = \"float\", low = 0, high = 1, when = { model = \"a\" } }\n"
              "xb = { type = \"float\", low = 0, high = 1, when = { model = \"b\" } }\n"
              "[[tasks]]\nname = \"first\"\nbudget = 10\n[[tasks]]\nname = \"second\"\nbudget = 10\n",
          dir.path());
      RunState state = lbo::testing::started_state(job);
      ModelPolicy policy(job, PolicyOptions{true, nullptr});
      // The first task tried family "a" only; its best is an "a".
      for (int i = 0; i < 3; ++i) {
        const std::int64_t t = lbo::testing::start_trial(state, 0, lbo::jobs::Config{{0.0, 0.1 * (i + 1), std::nullopt}});
        lbo::testing::end_attempt(state, t, ok_with(i));
      }
      std::set<int> families;
      std::vector<ProposalSource> sources;
      for (int i = 0; i < 4; ++i) {
        const Proposal p = policy.propose_among(state, {1}, state.next_trial_id());
        ASSERT_TRUE(job.space.is_valid(p.config));
        families.insert(static_cast<int>(*p.config.values[0]));
        sources.push_back(p.source);
        lbo::testing::end_attempt(state, lbo::testing::start_trial(state, 1, p.config, "local:0", p.source), ok_with(0.5));
      }
      const std::string where = surrogate + ", seed " + std::to_string(seed);
      EXPECT_EQ(families.size(), 4u) << where;
      EXPECT_EQ(sources[0], surrogate == "lbo" ? ProposalSource::earlier_best : ProposalSource::initial) << where;
      EXPECT_EQ(sources[3], ProposalSource::initial) << where;
    }
  }
}

// The one random fallback left: every configuration of a tiny space is taken. It is a
// fallback, and it says so.
TEST(ModelPolicyTest, a_space_with_every_configuration_taken_falls_back_and_says_why) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      "name = \"tiny\"\n[objective]\ncommand = [\"" + std::string(LBO_TEST_OBJECTIVE) + "\"]\ndirection = \"maximize\"\n[policy]\nsurrogate = \"gp\"\n"
      "initial_random = 0\n[space]\nk = { type = \"int\", low = 0, high = 2 }\n[[tasks]]\nname = \"t\"\nbudget = 9\n",
      dir.path());
  RunState state = lbo::testing::started_state(job);
  std::vector<std::string> log;
  ModelPolicy policy(job, PolicyOptions{true, [&log](const std::string& line) { log.push_back(line); }});
  for (int k = 0; k <= 2; ++k) {
    const std::int64_t t = lbo::testing::start_trial(state, 0, lbo::jobs::Config{{static_cast<double>(k)}});
    lbo::testing::end_attempt(state, t, ok_with(k));
  }
  lbo::testing::commit_and_fit(policy, state);
  const Proposal p = policy.propose_among(state, {0}, 3);
  EXPECT_EQ(p.source, ProposalSource::random_fallback);
  EXPECT_EQ(p.note, "every configuration the acquisition ranks high is taken by the task already");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("trial 3 (t): a random configuration (random-fallback)"), std::string::npos) << log[0];
}

// A nomination ranks the best Nominations::kRanked (64) distinct candidates first. When all of
// those are taken, it ranks every candidate and takes the best untaken one: the model's own
// proposal, not a random fallback. 100 configurations, all but the worst taken.
TEST(ModelPolicyTest, when_the_best_ranked_candidates_are_taken_the_rest_are_ranked) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(
      "name = \"wide\"\n[objective]\ncommand = [\"" + std::string(LBO_TEST_OBJECTIVE) + "\"]\ndirection = \"maximize\"\n[policy]\nsurrogate = \"gp\"\n"
      "initial_random = 0\n[space]\nk = { type = \"int\", low = 0, high = 99 }\n[[tasks]]\nname = \"t\"\nbudget = 100\n",
      dir.path());
  RunState state = lbo::testing::started_state(job);
  ModelPolicy policy(job, PolicyOptions{true, nullptr});
  for (int k = 1; k <= 99; ++k) {
    const std::int64_t t = lbo::testing::start_trial(state, 0, lbo::jobs::Config{{static_cast<double>(k)}});
    lbo::testing::end_attempt(state, t, ok_with(k));
  }
  lbo::testing::commit_and_fit(policy, state);
  const Proposal p = policy.propose_among(state, {0}, state.next_trial_id());
  EXPECT_EQ(p.source, ProposalSource::model) << p.note;
  ASSERT_TRUE(p.config.values[0].has_value());
  EXPECT_EQ(*p.config.values[0], 0.0);
}

TEST(FitThreadsTest, the_job_then_omp_num_threads_then_the_affinity_mask_less_the_local_slots) {
  lbo::jobs::JobSpec job;
  const char* saved = std::getenv("OMP_NUM_THREADS");
  const std::string kept = saved != nullptr ? saved : "";
  ::unsetenv("OMP_NUM_THREADS");
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  const int cores = CPU_COUNT(&mask);
  job.workers.local_slots = 1000;
  EXPECT_EQ(fit_threads(job, false).count, 1);  // the objectives come first
  job.workers.local_slots = 1;
  EXPECT_EQ(fit_threads(job, false).count, std::max(cores - 1, 1));
  EXPECT_EQ(fit_threads(job, true).count, cores);  // the master rank's cores are the model's
  EXPECT_NE(fit_threads(job, true).why.find("affinity mask"), std::string::npos);
  job.workers.local_slots = 1000;
  job.objective.table = lbo::jobs::ObjectiveTableSpec{};  // its slots start no process
  EXPECT_EQ(fit_threads(job, false).count, cores);
  EXPECT_NE(fit_threads(job, false).why.find("a tabulated objective starts no process"), std::string::npos);
  job.objective.table.reset();
  job.workers.local_slots = 1;
  ::setenv("OMP_NUM_THREADS", "7", 1);
  EXPECT_EQ(fit_threads(job, false).count, 7);
  EXPECT_EQ(fit_threads(job, false).why, "OMP_NUM_THREADS");
  ::setenv("OMP_NUM_THREADS", "4,2", 1);  // a nested list is not a count: ignored
  EXPECT_EQ(fit_threads(job, true).count, cores);
  job.policy.fit_threads = 3;
  EXPECT_EQ(fit_threads(job, false).count, 3);
  EXPECT_EQ(fit_threads(job, false).why, "[policy] fit_threads");
  if (saved != nullptr) {
    ::setenv("OMP_NUM_THREADS", kept.c_str(), 1);
  } else {
    ::unsetenv("OMP_NUM_THREADS");
  }
}

namespace {

// Runs `trials` trials of `task` through `policy` with objective x1 + x2 (minimized), refitting
// after each.
void run_trials(ModelPolicy& policy, RunState& state, int task, int trials) {
  for (int i = 0; i < trials; ++i) {
    const std::int64_t id = static_cast<std::int64_t>(state.trials().size());
    lbo::testing::start_trial(state, task, policy.propose(state, task, id));
    lbo::workers::Outcome o;
    o.status = lbo::workers::TrialStatus::ok;
    o.objective = *state.trial(id).config.values[0] + *state.trial(id).config.values[1];
    lbo::testing::end_attempt(state, id, o);
    lbo::testing::commit_and_fit(policy, state);
  }
}

}  // namespace

TEST(ModelPolicyTest, hedge_memory_starts_a_new_task_from_the_earlier_tasks_decayed_gains_and_is_checkpointed) {
  lbo::testing::ScratchDir dir;
  for (const double memory : {0.5, 0.0}) {
    const std::string tasks = "[[tasks]]\nname = \"b2\"\nbudget = 10\n";
    const lbo::jobs::JobSpec job = lbo::testing::job_from(
        branin_job("surrogate = \"gp\"\nacquisition = \"hedge\"\ninitial_random = 3\nhedge_memory = " + std::to_string(memory), 5, 10) +
            tasks,
        dir.path());
    RunState state = lbo::testing::started_state(job);
    std::vector<std::string> log;
    ModelPolicy policy(job, PolicyOptions{true, [&log](const std::string& line) { log.push_back(line); }});
    run_trials(policy, state, 0, 10);
    // Task b2's initial design draws nothing; its first model proposal seeds its gains. (b's
    // arms gain from b's last fit when it is adopted, at b2's first proposal: read them after.)
    run_trials(policy, state, 1, 3);
    const std::vector<double> earlier = policy.hedge_gains(0);
    ASSERT_TRUE(std::any_of(earlier.begin(), earlier.end(), [](double g) { return g != 0; }));
    EXPECT_EQ(policy.hedge_gains(1), (std::vector<double>{0, 0, 0}));
    policy.propose(state, 1, 13);
    const std::vector<double> seeded = policy.hedge_gains(1);
    ASSERT_EQ(seeded.size(), 3u);
    for (std::size_t a = 0; a < 3; ++a) EXPECT_DOUBLE_EQ(seeded[a], memory * earlier[a]) << "arm " << a;
    const bool logged = std::any_of(log.begin(), log.end(), [](const std::string& l) {
      return l.find("b2: GP-Hedge gains start at hedge_memory 0.5 x b's:") != std::string::npos;
    });
    EXPECT_EQ(logged, memory > 0);

    // A checkpoint keeps the seeded gains, and that the seeding happened: no second one.
    ModelPolicy resumed(job, PolicyOptions{true, nullptr});
    resumed.restore(policy.state(state), state);
    EXPECT_EQ(resumed.hedge_gains(1), seeded);
    resumed.propose(state, 1, 13);
    EXPECT_EQ(resumed.hedge_gains(1), seeded);
  }
}

namespace {

// Branin at a trial's configuration (the job's x1, x2).
double branin_of(const RunState& state, std::int64_t id) {
  constexpr double pi = std::numbers::pi;
  const double x1 = *state.trial(id).config.values[0], x2 = *state.trial(id).config.values[1];
  const double u = x2 - 5.1 / (4 * pi * pi) * x1 * x1 + 5 / pi * x1 - 6;
  return u * u + 10 * (1 - 1 / (8 * pi)) * std::cos(x1) + 10;
}

}  // namespace

// A --sync master checkpoints the policy after each fit, before it hands out the round; killed
// while handing it out, it resumes from that checkpoint and proposes the rest of the round. Those
// proposals, and every round after, must be the killed master's, bit for bit: the restored model
// is the fitted one, and the next fit starts from it as from the original. Every model of the
// job file's catalog: a new one whose state a checkpoint does not keep fails here.
TEST(ModelPolicyTest, a_sync_policy_restored_after_a_fit_proposes_the_rest_of_the_round_and_later_rounds_exactly) {
  lbo::testing::ScratchDir dir;
  for (const lbo::jobs::SurrogateTraits& traits : lbo::jobs::surrogate_catalog()) {
    if (traits.kind == lbo::jobs::SurrogateKind::random) continue;  // model-free: nothing to restore
    const std::string model(traits.name);
    SCOPED_TRACE(model);
    const lbo::jobs::JobSpec job = lbo::testing::job_from(
        branin_job("surrogate = \"" + model + "\"\ninitial_random = 4\ncandidates = 200\nrefine = 2", 9, 24), dir.path());
    RunState state = lbo::testing::started_state(job);
    ModelPolicy original(job, PolicyOptions{true, nullptr});
    std::optional<ModelPolicy> resumed;
    constexpr int kSlots = 4;
    for (int round = 0; round < 4; ++round) {
      if (round == 2) {  // the checkpoint after the fit; the master dies after two proposals
        resumed.emplace(job, PolicyOptions{true, nullptr});
        resumed->restore(original.state(state), state);
      }
      std::vector<std::int64_t> ids;
      for (int slot = 0; slot < kSlots; ++slot) {
        const std::int64_t id = state.next_trial_id();
        const lbo::jobs::Config config = original.propose(state, 0, id);
        if (resumed && (round > 2 || slot >= 2)) {
          EXPECT_EQ(resumed->propose(state, 0, id), config) << "trial " << id;
        }
        lbo::testing::start_trial(state, 0, config);
        ids.push_back(id);
      }
      for (std::int64_t id : ids) lbo::testing::end_attempt(state, id, ok_with(branin_of(state, id)));
      lbo::testing::commit_and_fit(original, state);
      if (resumed) lbo::testing::commit_and_fit(*resumed, state);
    }
  }
}

// With two objectives the model learns each task's scalarized results (ParEGO). A checkpoint
// written after the round's first two trials were created (so the master can die on the third)
// rebuilds the posterior on the same scalarized values as the fit: its weights follow the
// task's results, not the trials created. The resumed policy proposes the rest of the round,
// and every round after, as the original does.
TEST(ModelPolicyTest, a_sync_policy_with_two_objectives_restored_mid_round_proposes_as_the_original) {
  lbo::testing::ScratchDir dir;
  std::string text = branin_job("surrogate = \"gp\"\ninitial_random = 4\ncandidates = 200\nrefine = 2", 9, 24);
  const std::string single = "direction = \"minimize\"\n";
  text.replace(text.find(single), single.size(),
               "objectives = [{ name = \"value\", direction = \"minimize\" }, { name = \"cost\", direction = \"minimize\" }]\n");
  const lbo::jobs::JobSpec job = lbo::testing::job_from(text, dir.path());
  ASSERT_EQ(job.objective.several.size(), 2u);
  RunState state = lbo::testing::started_state(job);
  ModelPolicy original(job, PolicyOptions{true, nullptr});
  std::optional<ModelPolicy> resumed;
  constexpr int kSlots = 3;
  int compared = 0;
  for (int round = 0; round < 5; ++round) {
    std::vector<std::int64_t> ids;
    for (int slot = 0; slot < kSlots; ++slot) {
      if (round == 2 && slot == 2) {  // the checkpoint, with two of the round's trials created
        resumed.emplace(job, PolicyOptions{true, nullptr});
        resumed->restore(original.state(state), state);
      }
      const std::int64_t id = state.next_trial_id();
      const lbo::jobs::Config config = original.propose(state, 0, id);
      if (resumed) {
        EXPECT_EQ(resumed->propose(state, 0, id), config) << "trial " << id;
        ++compared;
      }
      lbo::testing::start_trial(state, 0, config);
      ids.push_back(id);
    }
    for (std::int64_t id : ids) {
      const lbo::jobs::Config& c = state.trial(id).config;
      lbo::workers::Outcome o = ok_with(branin_of(state, id));
      o.values = {o.objective, *c.values[0] * *c.values[0] + *c.values[1] * *c.values[1]};
      lbo::testing::end_attempt(state, id, o);
    }
    lbo::testing::commit_and_fit(original, state);
    if (resumed) lbo::testing::commit_and_fit(*resumed, state);
  }
  EXPECT_EQ(compared, 7);
  EXPECT_EQ(state.tasks()[0].pareto.empty(), false);
}

// The data a checkpoint holds can differ from those of the fit the policy proposes from: a
// trial paused at a rung was in the fit, then promoted (running again, it is out of the data), and
// a kill cancelled that attempt (recovery). A --sync master resumed there (its anchor
// checkpoint, written before it hands out the rest of the round) must still propose as the fit
// did: the checkpoint rebuilds the model on the fit's own rows and values (PolicyState::fitted),
// not on its trials. Rebuilt on its trials it proposed otherwise (CI's integration_kill_resume,
// Hyperband promotion killed after a promotion and a new trial of one round).
TEST(ModelPolicyTest, a_policy_restored_after_a_fitted_paused_trial_was_promoted_proposes_as_the_fit_did) {
  lbo::testing::ScratchDir dir;
  for (const bool cancelled : {false, true}) {
    SCOPED_TRACE(cancelled ? "promoted, then cancelled by a kill" : "promoted, running");
    const lbo::jobs::JobSpec job = lbo::testing::job_from(
        branin_job("surrogate = \"gp\"\ninitial_random = 4\ncandidates = 200\nrefine = 2", 11, 24), dir.path());
    RunState state = lbo::testing::started_state(job);
    ModelPolicy original(job, PolicyOptions{true, nullptr});
    std::int64_t paused = -1;
    for (int round = 0; round < 2; ++round) {
      std::vector<std::int64_t> ids;
      for (int slot = 0; slot < 3; ++slot) {
        const std::int64_t id = state.next_trial_id();
        ids.push_back(lbo::testing::start_trial(state, 0, original.propose(state, 0, id)));
      }
      for (const std::int64_t id : ids) {
        lbo::workers::Outcome o = ok_with(branin_of(state, id));
        const bool pause = round == 1 && id == ids.back();
        if (pause) {
          o.status = lbo::workers::TrialStatus::paused;
          paused = id;
        }
        lbo::testing::end_attempt(state, id, o, "local:0", !pause);
      }
      lbo::testing::commit_and_fit(original, state);
    }
    ASSERT_TRUE(state.trial(paused).paused());
    const std::int64_t fitted = original.state(state).fitted_observations;
    // The next round: the paused trial is promoted (and, killed, its attempt cancelled).
    lbo::testing::start_again(state, paused);
    if (cancelled) state.stop_running();
    ModelPolicy resumed(job, PolicyOptions{true, nullptr});
    const PolicyState saved = original.state(state);
    ASSERT_EQ(saved.fitted_observations, fitted);
    resumed.restore(saved, state);
    EXPECT_TRUE(resumed.refit_due(state)) << "the trials now lack one the fit had";
    for (int slot = 0; slot < 2; ++slot) {
      const std::int64_t id = state.next_trial_id();
      const lbo::jobs::Config config = original.propose(state, 0, id);
      EXPECT_EQ(resumed.propose(state, 0, id), config) << "trial " << id;
      lbo::testing::start_trial(state, 0, config);
    }
  }
}

// A proposal is labelled with what made it. While the job's model (lbo, whose fit on large
// earlier tasks takes seconds) has no fit that covers a task, the task's proposals come from an
// interim GP on its own results and say so (interim-gp, with the reason in the note, and once in
// the log), never "model"; once a fit covers it, "model" and the log says that too.
TEST(ModelPolicyTest, a_proposal_is_labelled_by_the_model_that_made_it) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = lbo::testing::job_from(branin_job("surrogate = \"lbo\"\ninitial_random = 3", 4, 12), dir.path());
  std::mt19937_64 rng(5);
  std::vector<WarmTask> warm;
  for (int t = 0; t < 3; ++t) {
    WarmTask w{"old:earlier-" + std::to_string(t), {}, {}, lbo::jobs::Direction::minimize};
    for (int i = 0; i < 80; ++i) {
      const lbo::jobs::Config c = job.space.sample(rng);
      const double x1 = *c.values[0], x2 = *c.values[1];
      w.configs.push_back(c);
      w.objectives.push_back(std::pow(x2 - 0.129 * x1 * x1 + 1.59 * x1 - 6, 2) + 9.6 * std::cos(x1 - 0.3 * t) + 10);
    }
    warm.push_back(std::move(w));
  }
  std::vector<std::string> log;
  ModelPolicy policy(job, PolicyOptions{false, [&log](const std::string& line) { log.push_back(line); }, {}, warm});
  RunState state = lbo::testing::started_state(job);
  for (int i = 0; i < 3; ++i) {  // the design: earlier tasks' bests, then random
    const std::int64_t id = state.next_trial_id();
    const Proposal p = policy.propose_among(state, {0}, id);
    EXPECT_TRUE(p.source == ProposalSource::earlier_best || p.source == ProposalSource::initial) << to_string(p.source);
    lbo::testing::start_trial(state, 0, p.config, "local:0", p.source, p.note);
    lbo::testing::end_attempt(state, id, ok_with(branin_of(state, id)));
  }
  ASSERT_EQ(policy.fits_completed(), 0u) << "no fit was asked for yet";
  policy.results_committed(state);  // lbo's fit on 243 results starts on its thread
  const Proposal early = policy.propose_among(state, {0}, state.next_trial_id());
  if (policy.fits_completed() == 0) {  // no fit was published while it proposed (seconds: the usual case)
    EXPECT_EQ(early.source, ProposalSource::interim_gp);
    EXPECT_NE(early.note.find("a GP on 3 of the task's 3 results: no lbo fit has finished yet"), std::string::npos) << early.note;
    EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const std::string& l) {
      return l.find("task b proposes from an interim GP (proposed_by interim-gp) until lbo has a fit") != std::string::npos;
    })) << "the log does not say it";
  }
  EXPECT_NE(early.source, ProposalSource::model) << "no lbo fit covered the task when it proposed";
  lbo::testing::start_trial(state, 0, early.config, "local:0", early.source, early.note);
  policy.wait_for_fits(1);
  const Proposal later = policy.propose_among(state, {0}, state.next_trial_id());
  EXPECT_EQ(later.source, ProposalSource::model);
  EXPECT_TRUE(later.note.empty()) << later.note;
  if (early.source == ProposalSource::interim_gp) {
    EXPECT_TRUE(std::any_of(log.begin(), log.end(), [](const std::string& l) {
      return l.find("task b proposes from lbo's fit of it now, after 1 proposal(s) from its interim GP") != std::string::npos;
    }));
  }
  lbo::testing::start_trial(state, 0, later.config, "local:0", later.source, later.note);
  EXPECT_EQ(model_share(state), early.source == ProposalSource::interim_gp ? "model 50% (1 interim-gp)" : "model 100%");
}

namespace {

// The quarter disc of radius 0.65 around Branin's corner (10, 15), in the box scaled to [0, 1]².
bool in_failing_corner(const lbo::jobs::Config& c) {
  const double u = (10 - *c.values[0]) / 15, v = (15 - *c.values[1]) / 15;
  return u * u + v * v < 0.65 * 0.65;
}

lbo::workers::Outcome failed_with(lbo::workers::TrialStatus status) {
  lbo::workers::Outcome o;
  o.status = status;
  o.reason = "exit status 1; stderr: CUDA out of memory";
  return o;
}

}  // namespace

// What a trial teaches the failure model: a trial that ran (ok, stopped, paused) succeeded; one
// that failed of itself (failed, timeout, crashed) failed; cancelled, lbo's own error, running:
// nothing.
TEST(FailureModelTest, a_trial_teaches_by_how_it_ended) {
  using lbo::workers::TrialStatus;
  Trial t;
  EXPECT_EQ(FailureModel::label(t), -1) << "running";
  t.finished = true;
  for (const auto& [status, label] : std::vector<std::pair<TrialStatus, int>>{{TrialStatus::ok, 1},
                                                                            {TrialStatus::stopped, 1},
                                                                            {TrialStatus::failed, 0},
                                                                            {TrialStatus::timeout, 0},
                                                                            {TrialStatus::crashed, 0},
                                                                            {TrialStatus::cancelled, -1},
                                                                            {TrialStatus::lbo_error, -1}}) {
    t.outcome.status = status;
    EXPECT_EQ(FailureModel::label(t), label) << static_cast<int>(status);
  }
  t.finished = false;
  t.outcome.status = TrialStatus::paused;
  EXPECT_EQ(FailureModel::label(t), 1) << "paused at a rung";
  t.task = -1;
  EXPECT_EQ(FailureModel::label(t), -1) << "lost";
}

// A first task mapped the failing corner with 30 random trials. A second task's 20-point random
// design keeps out of it with failures learned (each point noted with its probability of
// success), and falls into it as often as chance would with failures = "ignore" (the same draws).
TEST(ModelPolicyTest, a_later_tasks_design_keeps_out_of_where_the_earlier_task_failed) {
  lbo::testing::ScratchDir dir;
  std::map<std::string, int> inside;
  for (const std::string failures : {"learn", "ignore"}) {
    const std::string text = branin_job("surrogate = \"gp\"\ninitial_random = 20", 3, 30) +
                             "[[tasks]]\nname = \"second\"\nbudget = 20\n";
    std::string with_failures = text;
    with_failures.replace(with_failures.find("direction"), 0, "failures = \"" + failures + "\"\n");
    const lbo::jobs::JobSpec job = lbo::testing::job_from(with_failures, dir.path());
    RunState state = lbo::testing::started_state(job);
    ModelPolicy policy(job, PolicyOptions{true, nullptr});
    RandomPolicy random(job.space, 17);
    for (int i = 0; i < 30; ++i) {
      const lbo::jobs::Config c = random.propose(state, 0, state.next_trial_id());
      const std::int64_t id = lbo::testing::start_trial(state, 0, c);
      lbo::testing::end_attempt(state, id, in_failing_corner(c) ? failed_with(lbo::workers::TrialStatus::failed)
                                                                : ok_with(branin_at(c)));
    }
    for (int i = 0; i < 20; ++i) {
      const Proposal p = policy.propose_among(state, {1}, state.next_trial_id());
      EXPECT_EQ(p.source, ProposalSource::initial);
      EXPECT_EQ(p.note.find("estimated probability of success ") != std::string::npos, failures == "learn") << p.note;
      inside[failures] += in_failing_corner(p.config) ? 1 : 0;
      lbo::testing::end_attempt(state, lbo::testing::start_trial(state, 1, p.config),
                                in_failing_corner(p.config) ? failed_with(lbo::workers::TrialStatus::crashed)
                                                            : ok_with(branin_at(p.config)));
    }
  }
  EXPECT_LE(inside["learn"], 2) << "of 20 design points in the failing corner";
  EXPECT_GE(inside["ignore"], 4) << "the same draws without the failure model: the test would show nothing";
}
