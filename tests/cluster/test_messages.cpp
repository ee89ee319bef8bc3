#include "messages.hpp"

#include <gtest/gtest.h>

using namespace lbo::cluster;

TEST(MessagesTest, work_order_round_trip) {
  lbo::workers::WorkOrder order;
  order.trial = 123456789012;
  order.attempt = 3;
  order.argv = {"/usr/bin/python3", "train.py", "--data", "/d/x.csv"};
  order.env = {{"LBO_TASK", "year-1"}, {"LBO_DATASET", ""}};
  order.workdir = "/runs/q/trials/17";
  order.params_json = R"({"lr": 0.1})";
  order.timeout_s = 600;
  order.kill_grace_s = 2.5;
  const auto back = detail::decode<lbo::workers::WorkOrder>(detail::encode(order));
  EXPECT_EQ(back.trial, order.trial);
  EXPECT_EQ(back.attempt, order.attempt);
  EXPECT_EQ(back.argv, order.argv);
  ASSERT_EQ(back.env.size(), 2u);
  EXPECT_EQ(back.env[0].name, "LBO_TASK");
  EXPECT_EQ(back.env[0].value, "year-1");
  EXPECT_EQ(back.env[1].value, "");
  EXPECT_EQ(back.workdir, order.workdir);
  EXPECT_EQ(back.params_json, order.params_json);
  EXPECT_EQ(back.timeout_s, order.timeout_s);
  EXPECT_EQ(back.kill_grace_s, order.kill_grace_s);
}

TEST(MessagesTest, result_and_setup_round_trip) {
  detail::ResultMessage result;
  result.trial = 9;
  result.attempt = 2;
  result.slot = 1;
  result.outcome.status = lbo::workers::TrialStatus::timeout;
  result.outcome.objective = 0.5;
  result.outcome.steps = {1, 2, 3};
  result.outcome.metrics_json = R"({"a": 1})";
  result.outcome.reason = "timed out after 600 s";
  result.outcome.duration_s = 600.25;
  const auto back = detail::decode<detail::ResultMessage>(detail::encode(result));
  EXPECT_EQ(back.trial, 9);
  EXPECT_EQ(back.attempt, 2);
  EXPECT_EQ(back.slot, 1);
  EXPECT_EQ(back.outcome.status, lbo::workers::TrialStatus::timeout);
  EXPECT_EQ(back.outcome.objective, 0.5);
  EXPECT_EQ(back.outcome.steps, result.outcome.steps);
  EXPECT_EQ(back.outcome.metrics_json, result.outcome.metrics_json);
  EXPECT_EQ(back.outcome.reason, result.outcome.reason);
  EXPECT_EQ(back.outcome.duration_s, result.outcome.duration_s);

  WorkerSetup setup;
  setup.resources.slots = 3;
  setup.resources.threads_per_trial = 4;
  setup.resources.manage_threads = true;
  setup.resources.gpus_per_trial = 2;
  setup.resources.gpus = {"0", "GPU-x"};
  setup.output_limit_bytes = 12345;
  const auto setup_back = detail::decode<WorkerSetup>(detail::encode(setup));
  EXPECT_EQ(setup_back.resources.slots, 3);
  EXPECT_EQ(setup_back.resources.threads_per_trial, 4);
  EXPECT_TRUE(setup_back.resources.manage_threads);
  EXPECT_EQ(setup_back.resources.gpus_per_trial, 2);
  EXPECT_EQ(setup_back.resources.gpus, setup.resources.gpus);
  EXPECT_EQ(setup_back.output_limit_bytes, 12345u);
  setup.resources.slots.reset();  // "auto"
  EXPECT_FALSE(detail::decode<WorkerSetup>(detail::encode(setup)).resources.slots.has_value());

  const detail::WorkerReady ready{2, "node7", "2 slot(s)", {"rank 1: a note"}};
  const auto ready_back = detail::decode<detail::WorkerReady>(detail::encode(ready));
  EXPECT_EQ(ready_back.slots, 2);
  EXPECT_EQ(ready_back.host, "node7");
  EXPECT_EQ(ready_back.resources, "2 slot(s)");
  EXPECT_EQ(ready_back.notes, ready.notes);

  result.outcome.cores = "0-3";
  result.outcome.gpus = "1";
  const auto placed = detail::decode<detail::ResultMessage>(detail::encode(result));
  EXPECT_EQ(placed.outcome.cores, "0-3");
  EXPECT_EQ(placed.outcome.gpus, "1");
}

TEST(MessagesTest, truncated_bytes_throw_instead_of_reading_garbage) {
  const std::string bytes = detail::encode(detail::ResultMessage{});
  EXPECT_THROW(detail::decode<detail::ResultMessage>(bytes.substr(0, bytes.size() / 2)), std::exception);
}

TEST(MessagesTest, report_batch_round_trip) {
  detail::ReportBatch batch;
  lbo::workers::TrialReport good;
  good.trial = 4;
  good.attempt = 2;
  good.step = 7;
  good.value = -0.125;
  good.metrics_json = R"({"loss": 3})";
  good.elapsed_s = 1.5;
  lbo::workers::TrialReport bad;
  bad.trial = 5;
  bad.error = "the report is not valid JSON";
  batch.reports = {good, bad};
  const auto back = detail::decode<detail::ReportBatch>(detail::encode(batch));
  ASSERT_EQ(back.reports.size(), 2u);
  EXPECT_EQ(back.reports[0].trial, 4);
  EXPECT_EQ(back.reports[0].attempt, 2);
  EXPECT_EQ(back.reports[0].step, 7);
  EXPECT_EQ(back.reports[0].value, -0.125);
  EXPECT_EQ(back.reports[0].metrics_json, good.metrics_json);
  EXPECT_EQ(back.reports[0].elapsed_s, 1.5);
  EXPECT_EQ(back.reports[1].error, bad.error);
}
