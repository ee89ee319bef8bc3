// FitService: fits in the background, published as snapshots; never holds up its owner.
#include "fit_service.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

using namespace lbo::orchestrator;
using namespace std::chrono_literals;

namespace {

// A surrogate whose fit lasts until the test lets it finish.
class HeldFit final : public lbo::surrogate::Surrogate {
 public:
  explicit HeldFit(std::shared_future<void> release, std::promise<void>* started)
      : release_(std::move(release)), started_(started) {}
  void fit(const lbo::surrogate::TaskData&, std::uint64_t) override {
    if (started_ != nullptr) std::exchange(started_, nullptr)->set_value();
    release_.wait();
  }
  std::shared_ptr<const lbo::surrogate::TaskPosterior> posterior(int) const override { return nullptr; }
  lbo::surrogate::SurrogateState state() const override { return {}; }
  void restore(const lbo::surrogate::SurrogateState&, const lbo::surrogate::TaskData&) override {}

 private:
  std::shared_future<void> release_;
  std::promise<void>* started_;
};

FitRequest one_task() {
  FitRequest r;
  r.data.tasks.push_back({Eigen::MatrixXd::Zero(1, 1), Eigen::VectorXd::Zero(1)});
  r.trials.push_back({0});
  return r;
}

}  // namespace

TEST(FitServiceTest, a_fit_is_published_and_a_request_during_it_marks_the_data_stale) {
  std::promise<void> release, started;
  FitService fits(std::make_unique<HeldFit>(release.get_future().share(), &started), true);
  fits.request(one_task());
  started.get_future().wait();
  EXPECT_TRUE(fits.busy());
  fits.request(one_task());  // while fitting: remembered, not queued
  EXPECT_FALSE(fits.stale());  // not yet: the fit under way may still cover it
  release.set_value();
  fits.wait_for_fits(1);
  EXPECT_EQ(fits.latest()->version, 1u);
  EXPECT_FALSE(fits.busy());
  EXPECT_TRUE(fits.stale());
}

TEST(FitServiceTest, destroying_it_does_not_wait_for_a_fit_in_progress) {
  std::promise<void> release, started;
  auto fits = std::make_unique<FitService>(std::make_unique<HeldFit>(release.get_future().share(), &started), true);
  fits->request(one_task());
  started.get_future().wait();
  auto destroyed = std::async(std::launch::async, [&] { fits.reset(); });
  // The fit is held until after this check: a destructor that waited for it would still be running.
  EXPECT_EQ(destroyed.wait_for(10s), std::future_status::ready);
  release.set_value();  // the abandoned thread finishes its fit and ends
  destroyed.wait();
}
