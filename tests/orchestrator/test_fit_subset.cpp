// [policy] max_fit_results: which results a fit takes when a task has more, worked by hand, and
// the fit's data built from them (the fit still covers every result).

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "bases.hpp"
#include "lbo/surrogate/surrogate.hpp"
#include "model_data.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;

namespace {

lbo::jobs::JobSpec capped_job(const std::filesystem::path& dir, const std::string& cap_line) {
  return lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 40\n", "",
                                                       "surrogate = \"gp\"\ninitial_random = 4\noutput_warping = \"none\"\n" + cap_line),
                                dir);
}

}  // namespace

// Cap 10 of 30 values 0..29 (in trial order): the best ⌈10/2⌉ = 5 are 25..29; the other 25 are
// cut into 5 equal stretches of 5, and the middle one of each is kept: 2, 7, 12, 17, 22. Equal
// values: the earlier ones are the better; of the 15 others 5..19, the middles of stretches of
// 3: 6, 9, 12, 15, 18. At or under the cap, or without one, every row.
TEST(FitSubsetTest, the_better_half_and_the_rest_spread_evenly_in_trial_order) {
  lbo::testing::ScratchDir dir;
  // ModelData keeps a reference to its job: the jobs outlive it.
  const lbo::jobs::JobSpec capped_spec = capped_job(dir.path(), "max_fit_results = 10");
  const lbo::jobs::JobSpec all_spec = capped_job(dir.path(), "");
  const ModelData capped(capped_spec, {});
  Eigen::VectorXd rising(30);
  for (Eigen::Index i = 0; i < 30; ++i) rising(i) = static_cast<double>(i);
  EXPECT_EQ(capped.fit_rows(rising), (std::vector<std::size_t>{2, 7, 12, 17, 22, 25, 26, 27, 28, 29}));
  EXPECT_EQ(capped.fit_rows(Eigen::VectorXd::Zero(20)), (std::vector<std::size_t>{0, 1, 2, 3, 4, 6, 9, 12, 15, 18}));
  EXPECT_EQ(capped.fit_rows(Eigen::VectorXd::Zero(10)).size(), 10u);
  const ModelData all(all_spec, {});
  EXPECT_EQ(all.fit_rows(rising).size(), 30u);
  // A smaller cap given (the master's first interim GP) stands for the job's; a larger one not.
  EXPECT_EQ(all.fit_rows(rising, 10), capped.fit_rows(rising));
  EXPECT_EQ(capped.fit_rows(rising, 20), capped.fit_rows(rising));
}

// A task with results but no fit yet proposes from an interim GP. With many results (a wave of
// slots ended), the first is fitted on the master's thread on a subset only, and the thread
// fits on all of them at once: a second interim fit comes without a new result. With a few,
// the first covers them all and no second one comes.
TEST(FitSubsetTest, a_first_interim_gp_on_many_results_is_fitted_on_a_subset_and_then_on_all) {
  lbo::testing::ScratchDir dir;
  for (const int results : {20, 200}) {
    const lbo::jobs::JobSpec job = capped_job(dir.path(), "");
    RunState state = lbo::testing::started_state(job);
    for (int i = 0; i < results; ++i) {
      const std::int64_t id = lbo::testing::start_trial(state, 0, {{(i * 0.618) - std::floor(i * 0.618)}});
      lbo::testing::end_attempt(state, id, lbo::testing::ok_with(std::sin(7.0 * i)));
    }
    const ModelData data(job, {});
    const std::shared_ptr<const Snapshot> no_fit;
    Bases bases(job, data, no_fit, false, false, 1);
    bases.track(1);
    const std::optional<Basis> first = bases.of(state, 0, 0);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->kind, Basis::Kind::interim);
    EXPECT_EQ(first->key, "interim 1");
    EXPECT_EQ(first->fitted->size(), static_cast<std::size_t>(results)) << "it covers every result";
    while (bases.fitting()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(bases.of(state, 0, 0)->key, results > 64 ? "interim 2" : "interim 1") << results << " results";
  }
}

// 30 results of values 0.1·i, the first 4 of the initial design: the fit takes the 10 rows
// above with their values and exploration indices among them, and covers all 30 trials (so a
// batch does not condition on the 20 left out).
TEST(FitSubsetTest, a_capped_fit_takes_the_subset_and_covers_every_result) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = capped_job(dir.path(), "max_fit_results = 10");
  ASSERT_EQ(job.policy.max_fit_results, 10);
  RunState state = lbo::testing::started_state(job);
  for (int i = 0; i < 30; ++i) {
    const std::int64_t id = lbo::testing::start_trial(state, 0, {{i / 30.0}}, "local:0",
                                                      i < 4 ? ProposalSource::initial : ProposalSource::model);
    lbo::testing::end_attempt(state, id, lbo::testing::ok_with(0.1 * i));
  }
  const ModelData data(job, {});
  const FitRequest fit = data.training_data(state);
  ASSERT_EQ(fit.data.tasks.size(), 1u);
  const std::vector<std::size_t> rows = {2, 7, 12, 17, 22, 25, 26, 27, 28, 29};
  ASSERT_EQ(fit.data.tasks[0].y.size(), 10);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_DOUBLE_EQ(fit.data.tasks[0].y(static_cast<Eigen::Index>(i)), 0.1 * static_cast<double>(rows[i]));
    EXPECT_DOUBLE_EQ(fit.data.tasks[0].X(static_cast<Eigen::Index>(i), 0), static_cast<double>(rows[i]) / 30.0);
  }
  EXPECT_EQ(fit.data.exploration[0], (std::vector<Eigen::Index>{0}));  // trial 2, the one of the design kept
  EXPECT_EQ(fit.trials[0].size(), 30u);
}

// The task's fit saw `seen` of its `results`. A wave that came after it (at least as many
// results as it saw, and 64 or more: thousands of slots that ended together) leaves the fit
// behind: the task proposes from an interim GP on all of its results until the next fit. A
// trickle of results after a fit keeps it.
TEST(FitSubsetTest, a_fit_a_wave_of_results_came_after_gives_way_to_an_interim_gp_on_all) {
  lbo::testing::ScratchDir dir;
  const lbo::jobs::JobSpec job = capped_job(dir.path(), "");
  const ModelData data(job, {});
  const auto state_with = [&](int results) {
    RunState state = lbo::testing::started_state(job);
    for (int i = 0; i < results; ++i) {
      const std::int64_t id = lbo::testing::start_trial(state, 0, {{(i * 0.618) - std::floor(i * 0.618)}});
      lbo::testing::end_attempt(state, id, lbo::testing::ok_with(std::sin(7.0 * i)));
    }
    return state;
  };
  struct Case {
    int seen, results;
    bool behind;
  };
  for (const Case c : {Case{10, 20, false}, Case{10, 73, false}, Case{10, 74, true}, Case{100, 200, true},
                       Case{101, 200, false}, Case{150, 200, false}}) {
    // The adopted fit: a GP on the first `seen` results.
    const FitRequest request = data.training_data(state_with(c.seen));
    lbo::surrogate::GpSurrogate gp;
    gp.fit(request.data, 1);
    auto fit = std::make_shared<Snapshot>();
    fit->version = 3;
    fit->posteriors.push_back(gp.posterior(0));
    fit->trials = request.trials;
    const std::shared_ptr<const Snapshot> adopted = fit;
    ASSERT_EQ(adopted->trials[0].size(), static_cast<std::size_t>(c.seen));

    const RunState state = state_with(c.results);
    Bases bases(job, data, adopted, false, false, 1);
    bases.track(1);
    const std::optional<Basis> basis = bases.of(state, 0, 0);
    ASSERT_TRUE(basis);
    const std::string label = std::to_string(c.seen) + " of " + std::to_string(c.results) + " seen";
    if (c.behind) {
      EXPECT_EQ(basis->kind, Basis::Kind::interim) << label;
      EXPECT_EQ(basis->fitted->size(), static_cast<std::size_t>(c.results)) << label << ": it covers every result";
    } else {
      EXPECT_EQ(basis->kind, Basis::Kind::fit) << label;
      EXPECT_EQ(basis->key, "fit 3") << label;
      EXPECT_EQ(basis->fitted->size(), static_cast<std::size_t>(c.seen)) << label;
    }
    while (bases.fitting()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}
