// FitService: fits on its thread, published as snapshots; never holds up its owner.
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
  explicit HeldFit(std::shared_future<void> release, std::promise<void>* started, std::promise<void>* gone = nullptr)
      : release_(std::move(release)), started_(started), gone_(gone) {}
  ~HeldFit() override {
    if (gone_ != nullptr) gone_->set_value();
  }
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
  std::promise<void>* gone_;
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
  FitService fits(std::make_unique<HeldFit>(release.get_future().share(), &started), FitThread::background);
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

// defer(): while a fit runs, new data only marks it stale (the caller builds no request); when
// the thread is idle, it says so and changes nothing.
TEST(FitServiceTest, defer_marks_the_data_stale_only_while_a_fit_runs) {
  std::promise<void> release, started;
  FitService fits(std::make_unique<HeldFit>(release.get_future().share(), &started), FitThread::background);
  EXPECT_FALSE(fits.defer()) << "idle: the caller requests";
  EXPECT_FALSE(fits.stale());
  fits.request(one_task());
  started.get_future().wait();
  EXPECT_TRUE(fits.defer());
  release.set_value();
  fits.wait_for_fits(1);
  EXPECT_FALSE(fits.busy());
  EXPECT_TRUE(fits.stale()) << "the next proposal requests a fit on the new data";
  EXPECT_FALSE(fits.defer());
}

TEST(FitServiceTest, destroying_it_does_not_wait_for_a_fit_in_progress) {
  std::promise<void> release, started;
  auto fits = std::make_unique<FitService>(std::make_unique<HeldFit>(release.get_future().share(), &started), FitThread::background);
  fits->request(one_task());
  started.get_future().wait();
  auto destroyed = std::async(std::launch::async, [&] { fits.reset(); });
  // The fit is held until after this check: a destructor that waited for it would still be running.
  EXPECT_EQ(destroyed.wait_for(10s), std::future_status::ready);
  release.set_value();  // the abandoned thread finishes its fit and ends
  destroyed.wait();
}

// --sync: the master waits for each fit, and the service says when it is published.
TEST(FitServiceTest, an_awaited_fit_says_when_it_is_published) {
  std::promise<void> release, started, told;
  int calls = 0;
  FitService fits(std::make_unique<HeldFit>(release.get_future().share(), &started), FitThread::awaited, 1, [&] {
    ++calls;
    told.set_value();
  });
  fits.request(one_task());
  started.get_future().wait();
  auto news = told.get_future();
  EXPECT_EQ(news.wait_for(50ms), std::future_status::timeout) << "told before the fit ended";
  release.set_value();
  ASSERT_EQ(news.wait_for(10s), std::future_status::ready);
  // Told after it was published: what the master adopts when it hears is this fit.
  ASSERT_NE(fits.latest(), nullptr);
  EXPECT_EQ(fits.latest()->version, 1u);
  EXPECT_FALSE(fits.busy());
  EXPECT_EQ(calls, 1);
}

// A run stopped during a --sync fit does not wait for it; whoever was to be told is gone then.
TEST(FitServiceTest, a_fit_that_ends_after_its_service_is_destroyed_tells_no_one) {
  std::promise<void> release, started, gone;
  bool told = false;
  auto fits = std::make_unique<FitService>(std::make_unique<HeldFit>(release.get_future().share(), &started, &gone),
                                           FitThread::awaited, 1, [&told] { told = true; });
  fits->request(one_task());
  started.get_future().wait();
  fits.reset();
  release.set_value();
  // The surrogate goes with the thread's last hold on the service's state, after its fit.
  ASSERT_EQ(gone.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(told);
}
