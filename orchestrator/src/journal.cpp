#include "lbo/orchestrator/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <fstream>
#include <sstream>

#include <boost/crc.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/types/variant.hpp>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/serialization.hpp"
#include "lbo/workers/serialization.hpp"

CEREAL_CLASS_VERSION(lbo::orchestrator::RunStarted, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::TrialStarted, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::TrialFinished, 1)

namespace lbo::orchestrator {

namespace {

constexpr char kMagic[4] = {'L', 'B', 'O', 'J'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kHeaderBytes = 8;
constexpr std::size_t kFrameBytes = 8;
constexpr std::uint32_t kMaxRecordBytes = 64u << 20;  // larger lengths are garbage

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::uint32_t crc32(std::string_view bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

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
  put_u32(framed, static_cast<std::uint32_t>(payload.size()));
  put_u32(framed, crc32(payload));
  framed += payload;
  return framed;
}

JournalWriter JournalWriter::create(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(path.string() + ": cannot create the journal: " + std::strerror(errno));
  JournalWriter writer(fd, 0);
  std::string header(kMagic, sizeof kMagic);
  put_u32(header, kFormatVersion);
  write_fully(fd, header, path.string());
  writer.size_ = header.size();
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

JournalContents read_journal(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptStateError(path.string() + ": cannot read the journal");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string bytes = std::move(text).str();
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw CorruptStateError(path.string() + ": not an lbo journal (bad header)");
  }
  if (const std::uint32_t version = get_u32(bytes.data() + 4); version != kFormatVersion) {
    throw CorruptStateError(path.string() + ": journal format " + std::to_string(version) +
                            " is not supported by this lbo (format " + std::to_string(kFormatVersion) + ")");
  }
  JournalContents contents;
  std::size_t offset = kHeaderBytes;
  while (offset < bytes.size()) {
    const std::size_t left = bytes.size() - offset;
    const std::uint32_t length = left >= kFrameBytes ? get_u32(bytes.data() + offset) : 0;
    const bool complete = left >= kFrameBytes && length <= kMaxRecordBytes && length <= left - kFrameBytes;
    if (!complete) break;
    const std::string_view payload(bytes.data() + offset + kFrameBytes, length);
    if (crc32(payload) != get_u32(bytes.data() + offset + 4)) break;
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
  }
  contents.valid_bytes = offset;
  contents.dropped_bytes = bytes.size() - offset;
  if (contents.dropped_bytes > 0) {
    contents.warning = path.string() + ": dropped " + std::to_string(contents.dropped_bytes) +
                       " bytes of a torn or corrupt record at offset " + std::to_string(offset) + "; kept " +
                       std::to_string(contents.records.size()) + " records";
  }
  return contents;
}

}  // namespace lbo::orchestrator
