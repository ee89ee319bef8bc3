// The model registry (policy/src/models/): every surrogate the job file can name has an entry
// that builds it, and what a model says of its tasks comes from its own entry.
#include "models/models.hpp"

#include <gtest/gtest.h>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/saved_model.hpp"
#include "test_support.hpp"

using namespace lbo;
using namespace lbo::orchestrator;

namespace {

// Three points of one task in [0, 1]², y = x0 + x1.
surrogate::TaskData small_task() {
  surrogate::TaskData data;
  Eigen::MatrixXd X(3, 2);
  X << 0.1, 0.2, 0.5, 0.9, 0.8, 0.3;
  data.tasks.push_back({X, X.rowwise().sum()});
  data.finished.push_back(false);
  data.exploration.push_back({0, 1, 2});
  return data;
}

}  // namespace

TEST(ModelRegistryTest, every_surrogate_of_the_job_file_has_an_entry_that_builds_and_fits_it) {
  int models = 0;
  for (const jobs::SurrogateTraits& traits : jobs::surrogate_catalog()) {
    EXPECT_EQ(jobs::to_string(traits.kind), traits.name);
    EXPECT_EQ(&jobs::traits_of(traits.kind), &traits);
    if (traits.kind == jobs::SurrogateKind::random) continue;  // a policy without a model
    const models::ModelEntry& entry = models::model_entry(traits.kind);
    EXPECT_EQ(entry.kind, traits.kind);
    jobs::PolicySpec policy;
    policy.surrogate = traits.kind;
    policy.network_width = 4;
    policy.network_depth = 1;
    policy.networks = 2;
    std::unique_ptr<surrogate::Surrogate> model = entry.make(policy, 2);
    ASSERT_NE(model, nullptr) << traits.name;
    model->fit(small_task(), 7);
    const auto posterior = model->posterior(0);
    ASSERT_NE(posterior, nullptr) << traits.name;
    Eigen::MatrixXd at(1, 2);
    at << 0.5, 0.9;
    EXPECT_TRUE(std::isfinite(posterior->predict(at).mean(0))) << traits.name;
    ++models;
  }
  EXPECT_EQ(models, 5);
}

TEST(ModelRegistryTest, the_job_file_names_every_surrogate_of_the_catalog_in_its_error) {
  lbo::testing::ScratchDir dir;
  try {
    lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 5\n", "", "surrogate = \"svm\""),
                           dir.path());
    FAIL() << "an unknown surrogate was taken";
  } catch (const lbo::InputError& e) {
    const std::string what = e.what();
    for (const jobs::SurrogateTraits& traits : jobs::surrogate_catalog()) {
      EXPECT_NE(what.find("\"" + std::string(traits.name) + "\""), std::string::npos) << what;
    }
  }
}

TEST(ModelRegistryTest, a_models_defaults_come_from_its_catalog_line) {
  lbo::testing::ScratchDir dir;
  const auto policy_of = [&](const std::string& name) {
    return lbo::testing::job_from(lbo::testing::test_job("", "[[tasks]]\nname = \"a\"\nbudget = 9\n", "",
                                                         "surrogate = \"" + name + "\""),
                                  dir.path())
        .policy;
  };
  EXPECT_EQ(policy_of("jumbo").acquisition, jobs::AcquisitionKind::ucb);
  EXPECT_EQ(policy_of("gp").acquisition, jobs::AcquisitionKind::ei);
  EXPECT_TRUE(policy_of("libo").libo_exploration);
  EXPECT_FALSE(policy_of("lbo").libo_exploration);
  EXPECT_EQ(jobs::traits_of(jobs::SurrogateKind::lbo).transfer_best, 2);
  EXPECT_EQ(jobs::traits_of(jobs::SurrogateKind::gp).transfer_best, 0);
}

// A checkpoint's model task of run task i is warm + i × steps: the saved description names
// each run task by its own model task's kernel, padded as `lbo status` lists tasks.
TEST(ModelRegistryTest, a_saved_model_describes_each_run_task_by_its_own_model_task) {
  PolicyState saved;
  saved.warm_sources = {"runs/older"};
  saved.steps = 2;
  surrogate::LiboState libo;
  libo.learned_from = {0};
  libo.task_kernels = {"warm", "k_full", "a step 2", "matern52[0]", "b step 2"};
  saved.surrogate.libo = libo;
  surrogate::LboState lbo_state;
  lbo_state.tasks.resize(5);
  lbo_state.tasks[3].log_gamma = {5.0, -5.0};
  lbo_state.tasks[3].fitted_size = 4;
  lbo_state.tasks[1].log_gamma = {0.0, 0.0};  // held, never fitted (no result when the fit ran): the prior's 0.5
  saved.surrogate.lbo = lbo_state;

  const SavedModel model = describe_saved_model(saved, {"a", "bb"});
  EXPECT_EQ(model.sections,
            "libo kernels (k̂ from the exploration of 1 finished task(s); k_full: all base kernels):\n"
            "  a     k_full\n"
            "  bb    matern52[0]\n");
  ASSERT_EQ(model.tasks.size(), 2u);
  EXPECT_TRUE(model.tasks[0].usage.empty());  // model task 1 was never fitted: no usage, not the prior's
  ASSERT_EQ(model.tasks[1].usage.size(), 2u);  // model task 3
  EXPECT_NEAR(model.tasks[1].usage[0], 1 / (1 + std::exp(-5.0)), 1e-12);
  EXPECT_EQ(model.tasks[1].kernels, "matern52[0]");
}
