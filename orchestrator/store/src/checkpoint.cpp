#include "lbo/orchestrator/checkpoint.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <cereal/archives/portable_binary.hpp>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "framing.hpp"
#include "serialization.hpp"

namespace fs = std::filesystem;

namespace lbo::orchestrator {

namespace {

constexpr char kMagic[4] = {'L', 'B', 'O', 'C'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kHeaderBytes = 4 + 4 + 8 + 4;

std::vector<std::uint64_t> sequences_on_disk(const fs::path& run_dir) {
  std::vector<std::uint64_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    if (const std::uint64_t n = RunPaths::checkpoint_sequence(entry.path()); n > 0) found.push_back(n);
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::string encode_checkpoint(const Checkpoint& checkpoint) {
  std::ostringstream payload_stream(std::ios::binary);
  {
    cereal::PortableBinaryOutputArchive archive(payload_stream);
    archive(checkpoint);
  }
  const std::string payload = std::move(payload_stream).str();
  std::string bytes(kMagic, sizeof kMagic);
  bytes.reserve(kHeaderBytes + payload.size());
  detail::put_le(bytes, kFormatVersion, 4);
  detail::put_le(bytes, payload.size(), 8);
  detail::put_le(bytes, detail::crc32(payload), 4);
  bytes += payload;
  return bytes;
}

Checkpoint decode_checkpoint(std::string_view bytes, const fs::path& file) {
  const std::string name = file.string();
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw CorruptStateError(name + ": not a checkpoint (bad header)");
  }
  if (const auto version = detail::get_le(bytes, 4, 4); version != kFormatVersion) {
    throw CorruptStateError(name + ": checkpoint format " + std::to_string(version) + " is not supported");
  }
  const std::uint64_t length = detail::get_le(bytes, 8, 8);
  if (length != bytes.size() - kHeaderBytes) {
    throw CorruptStateError(name + ": truncated (" + std::to_string(bytes.size() - kHeaderBytes) + " of " +
                            std::to_string(length) + " payload bytes)");
  }
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (detail::crc32(payload) != detail::get_le(bytes, 16, 4)) throw CorruptStateError(name + ": checksum mismatch (damaged)");
  try {
    Checkpoint checkpoint;
    detail::decode_payload(payload, checkpoint);
    return checkpoint;
  } catch (const std::exception& e) {
    throw CorruptStateError(name + ": does not decode (" + e.what() + ")");
  }
}

void write_checkpoint_file(const fs::path& run_dir, std::uint64_t sequence, const std::string& bytes) {
  const RunPaths paths(run_dir);
  write_file_atomically(paths.checkpoint(sequence), bytes, Durability::synced);
  // Keep this one and the newest before it: if this one is damaged later, the other still is
  // whole. (Not "sequence - 1": a write that failed leaves its number unused.)
  const std::vector<std::uint64_t> found = sequences_on_disk(run_dir);
  for (std::size_t i = 0; i + 2 < found.size(); ++i) {
    if (found[i] >= sequence) break;
    std::error_code ec;
    fs::remove(paths.checkpoint(found[i]), ec);
  }
}

CheckpointSearch load_newest_checkpoint(const fs::path& run_dir) {
  CheckpointSearch search;
  const std::vector<std::uint64_t> found = sequences_on_disk(run_dir);
  if (!found.empty()) search.newest_sequence = found.back();
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    const fs::path file = RunPaths(run_dir).checkpoint(*it);
    const char* next = std::next(it) != found.rend() ? "; using an older checkpoint"
                                                     : "; there is no older one: the run is rebuilt from the journal";
    if (const std::string what = not_a_regular_file(file); !what.empty()) {
      search.warnings.push_back(file.string() + " is " + what + ", not a checkpoint" + next);
      continue;
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    try {
      search.checkpoint = decode_checkpoint(text.str(), file);
      search.file = file;
      return search;
    } catch (const CorruptStateError& e) {
      search.warnings.push_back(std::string(e.what()) + next);
    }
  }
  return search;
}

CheckpointWriter::CheckpointWriter(fs::path run_dir) : run_dir_(std::move(run_dir)), thread_([this] { loop(); }) {}

CheckpointWriter::~CheckpointWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool CheckpointWriter::write_async(Checkpoint checkpoint) {
  {
    std::lock_guard lock(mutex_);
    if (writing_ || job_) return false;
    job_ = std::move(checkpoint);
  }
  cv_.notify_all();
  return true;
}

void CheckpointWriter::write_now(const Checkpoint& checkpoint) {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return !writing_ && !job_; });
  write_checkpoint_file(run_dir_, checkpoint.sequence, encode_checkpoint(checkpoint));
}

std::optional<std::string> CheckpointWriter::take_error() {
  std::lock_guard lock(mutex_);
  return std::exchange(error_, std::nullopt);
}

void CheckpointWriter::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || job_.has_value(); });
    if (!job_) return;  // stopping with nothing queued
    const Checkpoint checkpoint = std::move(*job_);
    job_.reset();
    writing_ = true;
    lock.unlock();
    std::optional<std::string> error;
    try {
      write_checkpoint_file(run_dir_, checkpoint.sequence, encode_checkpoint(checkpoint));
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    writing_ = false;
    if (error) error_ = std::move(error);
    cv_.notify_all();
  }
}

}  // namespace lbo::orchestrator
