#include "lbo/orchestrator/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <fstream>
#include <sstream>

#include <cereal/archives/portable_binary.hpp>

#include "lbo/jobs/error.hpp"
#include "framing.hpp"
#include "serialization.hpp"

namespace lbo::orchestrator {

namespace {

constexpr char kMagic[4] = {'L', 'B', 'O', 'J'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kHeaderBytes = 8;
constexpr std::size_t kFrameBytes = 8;
constexpr std::uint32_t kMaxRecordBytes = 64u << 20;  // larger lengths are garbage

void write_fully(int fd, const std::string& bytes, const std::string& what) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(what + ": write failed: " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string frame_record(const JournalRecord& record) {
  std::ostringstream payload_stream(std::ios::binary);
  {
    cereal::PortableBinaryOutputArchive archive(payload_stream);
    archive(record);
  }
  const std::string payload = std::move(payload_stream).str();
  std::string framed;
  framed.reserve(kFrameBytes + payload.size());
  detail::put_le(framed, payload.size(), 4);
  detail::put_le(framed, detail::crc32(payload), 4);
  framed += payload;
  return framed;
}

JournalWriter JournalWriter::create(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(path.string() + ": cannot create the journal: " + std::strerror(errno));
  JournalWriter writer(fd, 0);
  std::string header(kMagic, sizeof kMagic);
  detail::put_le(header, kFormatVersion, 4);
  write_fully(fd, header, path.string());
  writer.size_ = header.size();
  writer.sync();
  return writer;
}

JournalWriter JournalWriter::open_existing(const std::filesystem::path& path, std::uint64_t valid_bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open the journal: " + std::strerror(errno));
  JournalWriter writer(fd, valid_bytes);
  if (::ftruncate(fd, static_cast<off_t>(valid_bytes)) != 0) {
    throw Error(path.string() + ": cannot cut the torn tail: " + std::strerror(errno));
  }
  writer.sync();
  return writer;
}

JournalWriter::JournalWriter(JournalWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

JournalWriter& JournalWriter::operator=(JournalWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::append(const JournalRecord& record) {
  const std::string framed = frame_record(record);
  write_fully(fd_, framed, "journal");
  size_ += framed.size();
}

void JournalWriter::sync() {
  if (::fdatasync(fd_) != 0) throw Error(std::string("journal: fdatasync failed: ") + std::strerror(errno));
}

JournalContents read_journal(const std::filesystem::path& path, std::uint64_t from) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptStateError(path.string() + ": cannot read the journal");
  std::string header(kHeaderBytes, '\0');
  in.read(header.data(), kHeaderBytes);
  if (in.gcount() != static_cast<std::streamsize>(kHeaderBytes) || std::memcmp(header.data(), kMagic, sizeof kMagic) != 0) {
    throw CorruptStateError(path.string() + ": not an lbo journal (bad header)");
  }
  if (const std::uint32_t version = static_cast<std::uint32_t>(detail::get_le(header, 4, 4)); version != kFormatVersion) {
    throw CorruptStateError(path.string() + ": journal format " + std::to_string(version) +
                            " is not supported by this lbo (format " + std::to_string(kFormatVersion) + ")");
  }
  // Only the part after `from` is read: a checkpoint already holds what comes before.
  in.seekg(0, std::ios::end);
  const auto file_size = static_cast<std::uint64_t>(in.tellg());
  const std::uint64_t start = std::min(std::max<std::uint64_t>(from, kHeaderBytes), file_size);
  in.seekg(static_cast<std::streamoff>(start));
  std::string bytes(static_cast<std::size_t>(file_size - start), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  JournalContents contents;
  std::size_t offset = 0;
  while (offset < bytes.size()) {
    const std::size_t left = bytes.size() - offset;
    const std::uint32_t length = left >= kFrameBytes ? static_cast<std::uint32_t>(detail::get_le(bytes, offset, 4)) : 0;
    const bool complete = left >= kFrameBytes && length <= kMaxRecordBytes && length <= left - kFrameBytes;
    if (!complete) break;
    const std::string_view payload(bytes.data() + offset + kFrameBytes, length);
    if (detail::crc32(payload) != detail::get_le(bytes, offset + 4, 4)) break;
    try {
      std::istringstream payload_stream(std::string(payload), std::ios::binary);
      cereal::PortableBinaryInputArchive archive(payload_stream);
      JournalRecord record;
      archive(record);
      contents.records.push_back(std::move(record));
    } catch (const std::exception&) {
      break;  // a CRC-valid record this version cannot decode: treat like a corrupt one
    }
    offset += kFrameBytes + length;
    contents.ends.push_back(start + offset);
  }
  contents.valid_bytes = start + offset;
  contents.dropped_bytes = bytes.size() - offset;
  if (contents.dropped_bytes > 0) {
    contents.warning = path.string() + ": dropped " + std::to_string(contents.dropped_bytes) +
                       " bytes of a torn or corrupt record at offset " + std::to_string(start + offset) + "; kept " +
                       std::to_string(contents.records.size()) + " records" + (start > kHeaderBytes ? " after the checkpoint" : "");
  }
  return contents;
}

}  // namespace lbo::orchestrator
