#include "lbo/orchestrator/checkpoint.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <fstream>
#include <string>
#include <vector>

#include "framing.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "test_support.hpp"

using namespace lbo::orchestrator;
namespace fs = std::filesystem;

namespace {

Checkpoint sample(std::uint64_t sequence) {
  Checkpoint c;
  c.sequence = sequence;
  c.unix_time = 1.7e9 + 0.25;
  c.job.space = {lbo::jobs::ParamSpec{.name = "model", .type = lbo::jobs::ParamType::categorical, .choices = {"a", "b"}},
                 lbo::jobs::ParamSpec{.name = "lr", .low = 1e-3, .high = 0.5, .log = true,
                                      .when = {lbo::jobs::Condition{0, {1}}}}};
  c.job.direction = lbo::jobs::Direction::minimize;
  c.job.command = {"/usr/bin/python3", "train.py", "{params_file}"};
  c.job.tasks = {{"year-1", 30, "/data/y1.csv"}, {"year-2", 5, ""}};
  for (int i = 0; i < 3; ++i) {
    Trial t;
    t.id = i;
    t.task = i % 2;
    t.config.values = {1.0, i == 2 ? std::optional<double>() : std::optional<double>(0.01 * (i + 1))};
    t.attempts = i + 1;
    t.failed_attempts = i;
    t.finished = i != 1;
    t.running = i == 1;
    t.outcome.status = i == 2 ? lbo::workers::TrialStatus::crashed : lbo::workers::TrialStatus::ok;
    t.outcome.objective = 0.5 + i;
    t.outcome.steps = {0.1, 0.2};
    t.outcome.metrics_json = R"({"auc": 0.9})";
    t.outcome.reason = i == 2 ? "killed by SIGSEGV" : "";
    t.outcome.duration_s = 12.5;
    t.worker = "rank2:1";
    t.proposed_by = i == 0 ? lbo::orchestrator::ProposalSource::initial : lbo::orchestrator::ProposalSource::random_fallback;
    t.proposal_note = i == 0 ? "" : "no model fit has finished yet";
    for (int step = 1; step <= i; ++step) t.reports.push_back({i, step, 0.25 * step, 1.5 * step});
    c.trials.push_back(t);
  }
  c.retries = {2};
  c.interrupted = {1};
  c.journal_bytes = 12345;
  c.round_handed_out = false;
  lbo::surrogate::GpState gp;
  gp.theta = {{0.1, -0.2, 0.3, -4.0}, {}};
  gp.fitted_sizes = {7, -1};
  c.policy.surrogate.gp = gp;
  lbo::surrogate::AblrState ablr;
  ablr.parameters = {1.5, -2.5, 0.0};
  ablr.tasks = 1;
  ablr.cold_fit_size = 16;
  c.policy.surrogate.ablr = ablr;
  c.policy.hedge = {HedgeState{{0.5, -0.25, 1.0}, {{{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}}}}};
  lbo::surrogate::LboTaskState z;  // an lbo task: kept weights, heads and z
  z.weights = {{0.5, -1.5}, {}};
  z.heads = {{2.0}, {}};
  z.prior_heads = {{}, {}};
  z.log_gamma = {3.0, -4.0};
  z.log_lambda = 0.25;
  z.log_beta = 2.5;
  z.log_rho = -0.75;
  z.fitted_size = 9;
  z.strength = 1e-2;
  z.strength_size = 8;
  c.policy.surrogate.lbo = lbo::surrogate::LboState{{z}};
  lbo::surrogate::TransferState transfer;  // each task's GP over the other tasks' means
  transfer.gp.theta = {{0.1, -0.2, 0.3, -4.0, 0.5}, {0.2, 0.1, 0.0, -3.0}};
  transfer.gp.fitted_sizes = {9, 4};
  transfer.basis = {{1}, {}};
  transfer.gp_basis = {{1}, {0}};
  transfer.plain = lbo::surrogate::GpState{{{0.3, 0.2, 0.1, -5.0}, {0.4, 0.3, 0.2, -6.0}}, {9, 4}};
  c.policy.surrogate.transfer = transfer;
  lbo::surrogate::JumboState jumbo;  // a network, both GPs, and the cold switch's densities
  jumbo.network = {0.25, -0.5, 1.0};
  jumbo.trained_key = {0, 12};
  jumbo.cold = lbo::surrogate::GpState{{{0.1, 0.2, 0.0, -4.0}, {0.3, 0.1, 0.0, -5.0}}, {12, 6}};
  jumbo.warm = lbo::surrogate::GpState{{{}, {0.5, 0.4, 0.0, -3.0}}, {-1, 6}};
  jumbo.loo_cold = {std::numeric_limits<double>::quiet_NaN(), -3.5};
  jumbo.loo_warm = {std::numeric_limits<double>::quiet_NaN(), -7.25};
  c.policy.surrogate.jumbo = jumbo;
  lbo::surrogate::LiboState libo;  // Ĵ, what it was learned from, and the tasks' GPs
  libo.active = {3, 17};
  libo.learned_from = {0};
  libo.learned_key = {0, 5};
  libo.lambda = 0.125;
  libo.lambda_max = 2.5;
  libo.group_norms = {0.0, 0.75};
  libo.gp = lbo::surrogate::GpState{{{0.1, -4.0, -2.9}, {}}, {5, -1}};
  libo.task_kernels = {"matern52(all, 0.1) + rbf(x1, 0.3) (k_full share 0.05)", ""};
  c.policy.surrogate.libo = libo;
  c.policy.warm_sources = {"runs/older:a"};
  c.policy.steps = 3;
  // The fit's own data: a paused trial (4) it saw, with its value as fitted.
  c.policy.fitted = {{{0, 4}, {-0.5, 1.25}, {0, 2, 4}, false}, {{}, {}, {}, true}};
  return c;
}

void expect_same(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_EQ(a.sequence, b.sequence);
  EXPECT_EQ(a.unix_time, b.unix_time);
  ASSERT_EQ(a.job.space.size(), b.job.space.size());
  EXPECT_EQ(a.job.space[1].name, b.job.space[1].name);
  EXPECT_EQ(a.job.space[1].low, b.job.space[1].low);
  EXPECT_EQ(a.job.space[1].log, b.job.space[1].log);
  EXPECT_EQ(a.job.space[1].when[0].choices, b.job.space[1].when[0].choices);
  EXPECT_EQ(a.job.space[0].choices, b.job.space[0].choices);
  EXPECT_EQ(a.job.direction, b.job.direction);
  EXPECT_EQ(a.job.command, b.job.command);
  ASSERT_EQ(a.job.tasks.size(), b.job.tasks.size());
  EXPECT_EQ(a.job.tasks[0].name, b.job.tasks[0].name);
  EXPECT_EQ(a.job.tasks[0].budget, b.job.tasks[0].budget);
  EXPECT_EQ(a.job.tasks[0].dataset, b.job.tasks[0].dataset);
  ASSERT_EQ(a.trials.size(), b.trials.size());
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    const Trial &x = a.trials[i], &y = b.trials[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.task, y.task);
    EXPECT_EQ(x.config, y.config);
    EXPECT_EQ(x.attempts, y.attempts);
    EXPECT_EQ(x.failed_attempts, y.failed_attempts);
    EXPECT_EQ(x.finished, y.finished);
    EXPECT_EQ(x.running, y.running);
    EXPECT_EQ(x.outcome.status, y.outcome.status);
    EXPECT_EQ(x.outcome.objective, y.outcome.objective);
    EXPECT_EQ(x.outcome.steps, y.outcome.steps);
    EXPECT_EQ(x.outcome.metrics_json, y.outcome.metrics_json);
    EXPECT_EQ(x.outcome.reason, y.outcome.reason);
    EXPECT_EQ(x.outcome.duration_s, y.outcome.duration_s);
    EXPECT_EQ(x.worker, y.worker);
    EXPECT_EQ(x.proposed_by, y.proposed_by);
    EXPECT_EQ(x.proposal_note, y.proposal_note);
    ASSERT_EQ(x.reports.size(), y.reports.size());
    for (std::size_t r = 0; r < x.reports.size(); ++r) {
      EXPECT_EQ(x.reports[r].attempt, y.reports[r].attempt);
      EXPECT_EQ(x.reports[r].step, y.reports[r].step);
      EXPECT_EQ(x.reports[r].value, y.reports[r].value);
      EXPECT_EQ(x.reports[r].elapsed_s, y.reports[r].elapsed_s);
    }
  }
  EXPECT_EQ(a.retries, b.retries);
  EXPECT_EQ(a.interrupted, b.interrupted);
  EXPECT_EQ(a.journal_bytes, b.journal_bytes);
  ASSERT_TRUE(b.policy.surrogate.gp && b.policy.surrogate.ablr);
  EXPECT_EQ(a.policy.surrogate.gp->theta, b.policy.surrogate.gp->theta);
  EXPECT_EQ(a.policy.surrogate.gp->fitted_sizes, b.policy.surrogate.gp->fitted_sizes);
  EXPECT_EQ(a.policy.surrogate.ablr->parameters, b.policy.surrogate.ablr->parameters);
  EXPECT_EQ(a.policy.surrogate.ablr->tasks, b.policy.surrogate.ablr->tasks);
  EXPECT_EQ(a.policy.surrogate.ablr->cold_fit_size, b.policy.surrogate.ablr->cold_fit_size);
  ASSERT_EQ(b.policy.hedge.size(), 1u);
  EXPECT_EQ(a.policy.hedge[0].gains, b.policy.hedge[0].gains);
  EXPECT_EQ(a.policy.hedge[0].nominees, b.policy.hedge[0].nominees);
  ASSERT_TRUE(b.policy.surrogate.lbo && b.policy.surrogate.lbo->tasks.size() == 1u);
  const lbo::surrogate::LboTaskState &x = a.policy.surrogate.lbo->tasks[0], &y = b.policy.surrogate.lbo->tasks[0];
  EXPECT_EQ(x.weights, y.weights);
  EXPECT_EQ(x.heads, y.heads);
  EXPECT_EQ(x.prior_heads, y.prior_heads);
  EXPECT_EQ(x.log_gamma, y.log_gamma);
  EXPECT_EQ(x.log_lambda, y.log_lambda);
  EXPECT_EQ(x.log_beta, y.log_beta);
  EXPECT_EQ(x.log_rho, y.log_rho);
  EXPECT_EQ(x.fitted_size, y.fitted_size);
  EXPECT_EQ(x.strength, y.strength);
  EXPECT_EQ(x.strength_size, y.strength_size);
  ASSERT_TRUE(b.policy.surrogate.transfer);
  EXPECT_EQ(a.policy.surrogate.transfer->gp.theta, b.policy.surrogate.transfer->gp.theta);
  EXPECT_EQ(a.policy.surrogate.transfer->gp.fitted_sizes, b.policy.surrogate.transfer->gp.fitted_sizes);
  EXPECT_EQ(a.policy.surrogate.transfer->basis, b.policy.surrogate.transfer->basis);
  EXPECT_EQ(a.policy.surrogate.transfer->gp_basis, b.policy.surrogate.transfer->gp_basis);
  ASSERT_TRUE(b.policy.surrogate.transfer->plain);
  EXPECT_EQ(a.policy.surrogate.transfer->plain->theta, b.policy.surrogate.transfer->plain->theta);
  EXPECT_EQ(a.policy.surrogate.transfer->plain->fitted_sizes, b.policy.surrogate.transfer->plain->fitted_sizes);
  ASSERT_TRUE(b.policy.surrogate.jumbo);
  const lbo::surrogate::JumboState &ja = *a.policy.surrogate.jumbo, &jb = *b.policy.surrogate.jumbo;
  EXPECT_EQ(ja.network, jb.network);
  EXPECT_EQ(ja.trained_key, jb.trained_key);
  EXPECT_EQ(ja.cold.theta, jb.cold.theta);
  EXPECT_EQ(ja.warm.fitted_sizes, jb.warm.fitted_sizes);
  ASSERT_EQ(jb.loo_cold.size(), 2u);
  EXPECT_TRUE(std::isnan(jb.loo_cold[0]) && std::isnan(jb.loo_warm[0]));
  EXPECT_EQ(ja.loo_cold[1], jb.loo_cold[1]);
  EXPECT_EQ(ja.loo_warm[1], jb.loo_warm[1]);
  ASSERT_TRUE(b.policy.surrogate.libo);
  const lbo::surrogate::LiboState &la = *a.policy.surrogate.libo, &lb = *b.policy.surrogate.libo;
  EXPECT_EQ(la.active, lb.active);
  EXPECT_EQ(la.learned_from, lb.learned_from);
  EXPECT_EQ(la.learned_key, lb.learned_key);
  EXPECT_EQ(la.lambda, lb.lambda);
  EXPECT_EQ(la.lambda_max, lb.lambda_max);
  EXPECT_EQ(la.group_norms, lb.group_norms);
  EXPECT_EQ(la.gp.theta, lb.gp.theta);
  EXPECT_EQ(la.gp.fitted_sizes, lb.gp.fitted_sizes);
  EXPECT_EQ(la.task_kernels, lb.task_kernels);
  EXPECT_EQ(a.policy.warm_sources, b.policy.warm_sources);
  EXPECT_EQ(a.policy.steps, b.policy.steps);
  ASSERT_EQ(a.policy.fitted.size(), b.policy.fitted.size());
  for (std::size_t k = 0; k < a.policy.fitted.size(); ++k) {
    EXPECT_EQ(a.policy.fitted[k].rows, b.policy.fitted[k].rows);
    EXPECT_EQ(a.policy.fitted[k].values, b.policy.fitted[k].values);
    EXPECT_EQ(a.policy.fitted[k].usable, b.policy.fitted[k].usable);
    EXPECT_EQ(a.policy.fitted[k].finished, b.policy.fitted[k].finished);
  }
  EXPECT_EQ(a.round_handed_out, b.round_handed_out);
}

void write_raw(const fs::path& file, const std::string& bytes) { std::ofstream(file, std::ios::binary) << bytes; }

}  // namespace

TEST(CheckpointTest, round_trip_keeps_every_field) {
  const Checkpoint c = sample(4);
  expect_same(c, decode_checkpoint(encode_checkpoint(c), "x"));
}

TEST(CheckpointTest, truncation_and_bit_flips_are_detected) {
  const std::string bytes = encode_checkpoint(sample(1));
  for (std::size_t keep : {std::size_t{3}, std::size_t{19}, bytes.size() / 2, bytes.size() - 1}) {
    try {
      decode_checkpoint(bytes.substr(0, keep), "checkpoint.1.lbo");
      ADD_FAILURE() << "a checkpoint cut to " << keep << " bytes decoded";
    } catch (const lbo::CorruptStateError& e) {
      EXPECT_NE(std::string(e.what()).find("checkpoint.1.lbo"), std::string::npos) << e.what();
    }
  }
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x04);
  try {
    decode_checkpoint(flipped, "c");
    ADD_FAILURE() << "a bit flip went unnoticed";
  } catch (const lbo::CorruptStateError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
}

TEST(CheckpointTest, a_bool_byte_that_is_neither_0_nor_1_does_not_decode) {
  // Found by fuzz_checkpoint: cereal read any byte into a bool (undefined behaviour). The
  // checksum matches, as in a checkpoint written by another lbo.
  Checkpoint running = sample(1);
  running.trials[0].finished = false;
  std::string bytes = encode_checkpoint(sample(1));
  const std::string other = encode_checkpoint(running);
  ASSERT_EQ(bytes.size(), other.size());
  constexpr std::size_t kHeaderBytes = 20;
  std::vector<std::size_t> differ;
  for (std::size_t i = kHeaderBytes; i < bytes.size(); ++i) {
    if (bytes[i] != other[i]) differ.push_back(i);
  }
  ASSERT_EQ(differ.size(), 1u) << "only the byte of `finished` differs";
  bytes[differ[0]] = 2;
  std::string framed = bytes.substr(0, 16);
  detail::put_le(framed, detail::crc32(std::string_view(bytes).substr(kHeaderBytes)), 4);
  framed += bytes.substr(kHeaderBytes);
  try {
    decode_checkpoint(framed, "checkpoint.1.lbo");
    ADD_FAILURE() << "a bool byte of 2 decoded";
  } catch (const lbo::CorruptStateError& e) {
    EXPECT_NE(std::string(e.what()).find("does not decode"), std::string::npos) << e.what();
  }
}

TEST(CheckpointTest, a_size_larger_than_the_payload_is_refused_before_allocating) {
  // Found by fuzz_checkpoint: cereal allocated (and zero-filled) whatever size a string or a
  // vector was given before its read failed; 2^48 bytes were asked for.
  const std::string bytes = encode_checkpoint(sample(1));
  constexpr std::size_t kHeaderBytes = 20;
  std::string payload = bytes.substr(kHeaderBytes);
  const std::size_t script = payload.find("train.py");
  ASSERT_NE(script, std::string::npos);
  ASSERT_EQ(detail::get_le(payload, script - 8, 8), 8u) << "the string's size precedes it";
  std::string size;
  detail::put_le(size, std::uint64_t{1} << 26, 8);  // 64 MiB, in a payload of a few kB
  payload.replace(script - 8, 8, size);
  std::string framed = bytes.substr(0, 16);
  detail::put_le(framed, detail::crc32(payload), 4);
  framed += payload;
  try {
    decode_checkpoint(framed, "checkpoint.1.lbo");
    ADD_FAILURE() << "a size past the payload's end decoded";
  } catch (const lbo::CorruptStateError& e) {
    EXPECT_NE(std::string(e.what()).find("a size of 67108864 where only"), std::string::npos) << e.what();
  }
}

TEST(CheckpointTest, files_are_written_atomically_and_the_newest_two_kept) {
  lbo::testing::ScratchDir dir;
  for (std::uint64_t n = 1; n <= 4; ++n) write_checkpoint_file(dir.path(), n, encode_checkpoint(sample(n)));
  EXPECT_FALSE(fs::exists(RunPaths(dir.path()).checkpoint(1)));
  EXPECT_FALSE(fs::exists(RunPaths(dir.path()).checkpoint(2)));
  EXPECT_TRUE(fs::exists(RunPaths(dir.path()).checkpoint(3)));
  EXPECT_TRUE(fs::exists(RunPaths(dir.path()).checkpoint(4)));
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().extension(), ".lbo") << entry.path() << " left behind";
  }
  const CheckpointSearch search = load_newest_checkpoint(dir.path());
  ASSERT_TRUE(search.checkpoint);
  EXPECT_EQ(search.checkpoint->sequence, 4u);
  EXPECT_TRUE(search.warnings.empty());
  // Number 5 failed (a full disk): writing 6 still keeps 4 beside it, not 6 alone.
  write_checkpoint_file(dir.path(), 6, encode_checkpoint(sample(6)));
  EXPECT_FALSE(fs::exists(RunPaths(dir.path()).checkpoint(3)));
  EXPECT_TRUE(fs::exists(RunPaths(dir.path()).checkpoint(4)));
  EXPECT_TRUE(fs::exists(RunPaths(dir.path()).checkpoint(6)));
}

TEST(CheckpointTest, a_damaged_newest_checkpoint_falls_back_to_the_previous_one) {
  lbo::testing::ScratchDir dir;
  write_checkpoint_file(dir.path(), 1, encode_checkpoint(sample(1)));
  const std::string newest = encode_checkpoint(sample(2));
  write_raw(RunPaths(dir.path()).checkpoint(2), newest.substr(0, newest.size() - 10));  // torn write
  const CheckpointSearch search = load_newest_checkpoint(dir.path());
  ASSERT_TRUE(search.checkpoint);
  EXPECT_EQ(search.checkpoint->sequence, 1u);
  EXPECT_EQ(search.newest_sequence, 2u);
  ASSERT_EQ(search.warnings.size(), 1u);
  EXPECT_NE(search.warnings[0].find("checkpoint.2.lbo: truncated"), std::string::npos) << search.warnings[0];
  EXPECT_NE(search.warnings[0].find("; using an older checkpoint"), std::string::npos) << search.warnings[0];
  // Both damaged: nothing, and the last warning does not promise an older one (issue 31).
  write_raw(RunPaths(dir.path()).checkpoint(1), "garbage");
  const CheckpointSearch none = load_newest_checkpoint(dir.path());
  EXPECT_FALSE(none.checkpoint);
  ASSERT_EQ(none.warnings.size(), 2u);
  EXPECT_NE(none.warnings[1].find("checkpoint.1.lbo"), std::string::npos) << none.warnings[1];
  EXPECT_NE(none.warnings[1].find("there is no older one: the run is rebuilt from the journal"), std::string::npos)
      << none.warnings[1];
}

// Issue 31: a checkpoint or journal that is a folder or a FIFO made `lbo status` and `lbo
// report` fail with std::bad_alloc or block for ever. It is named and skipped (a checkpoint) or
// refused (the journal), at once.
TEST(CheckpointTest, a_checkpoint_that_is_no_regular_file_is_skipped) {
  lbo::testing::ScratchDir dir;
  write_checkpoint_file(dir.path(), 1, encode_checkpoint(sample(1)));
  fs::create_directory(RunPaths(dir.path()).checkpoint(2));
  ASSERT_EQ(::mkfifo(RunPaths(dir.path()).checkpoint(3).c_str(), 0644), 0);
  const CheckpointSearch search = load_newest_checkpoint(dir.path());
  ASSERT_TRUE(search.checkpoint);
  EXPECT_EQ(search.checkpoint->sequence, 1u);
  ASSERT_EQ(search.warnings.size(), 2u);
  EXPECT_NE(search.warnings[0].find("checkpoint.3.lbo is a FIFO, not a checkpoint; using an older checkpoint"),
            std::string::npos)
      << search.warnings[0];
  EXPECT_NE(search.warnings[1].find("checkpoint.2.lbo is a folder, not a checkpoint"), std::string::npos)
      << search.warnings[1];
}

TEST(CheckpointTest, a_foreground_write_waits_for_the_background_one) {
  lbo::testing::ScratchDir dir;
  {
    CheckpointWriter writer(dir.path());
    EXPECT_TRUE(writer.write_async(sample(1)));
    writer.write_now(sample(2));  // waits for the first
    EXPECT_FALSE(writer.take_error());
  }
  EXPECT_EQ(load_newest_checkpoint(dir.path()).checkpoint->sequence, 2u);
  EXPECT_TRUE(fs::exists(RunPaths(dir.path()).checkpoint(1)));
}
