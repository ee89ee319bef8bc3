#include "lbo/orchestrator/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include <cereal/archives/portable_binary.hpp>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/files.hpp"
#include "framing.hpp"
#include "serialization.hpp"

namespace lbo::orchestrator {

namespace {

constexpr char kMagic[4] = {'L', 'B', 'O', 'J'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kHeaderBytes = 8;
constexpr std::size_t kFrameBytes = 8;
constexpr std::uint32_t kMaxRecordBytes = 64u << 20;  // larger lengths are garbage
// A payload starts with cereal's portable-binary endianness byte (1: little endian) and the
// record's variant index as a little-endian int32: 01 ii 00 00 00.
constexpr std::size_t kSignatureBytes = 5;
constexpr std::size_t kRecordTypes = std::variant_size_v<JournalRecord>;

[[noreturn]] void fail_io(const std::filesystem::path& path, const std::string& what, int error_number = errno) {
  throw IoError(path.string() + ": " + what + ": " + system_reason(error_number), error_number);
}

// The frame starting at `at`, when it is one: a plausible length that fits, and a CRC that
// matches. `strict` also asks for the payload's signature, for positions found by scanning.
std::optional<std::uint32_t> frame_at(std::string_view bytes, std::size_t at, bool strict) {
  if (bytes.size() - at < kFrameBytes) return std::nullopt;
  const auto length = static_cast<std::uint32_t>(detail::get_le(bytes, at, 4));
  if (length == 0 || length > kMaxRecordBytes || length > bytes.size() - at - kFrameBytes) return std::nullopt;
  const std::string_view payload = bytes.substr(at + kFrameBytes, length);
  if (strict && (length < kSignatureBytes || payload[0] != 1 || payload[2] != 0 || payload[3] != 0 || payload[4] != 0)) {
    return std::nullopt;
  }
  if (detail::crc32(payload) != detail::get_le(bytes, at + 4, 4)) return std::nullopt;
  return length;
}

// The next position after `at` where an intact frame starts, or npos. A CRC-32 alone would
// match some random position in every few GiB of garbage; the 5-byte signature first makes a
// false resync practically impossible and the scan cheap.
std::size_t next_frame(std::string_view bytes, std::size_t at) {
  for (std::size_t p = at + 1; p + kFrameBytes + kSignatureBytes <= bytes.size(); ++p) {
    if (bytes[p + kFrameBytes] != 1) continue;  // cheap filter before the full check
    if (frame_at(bytes, p, true)) return p;
  }
  return std::string_view::npos;
}

bool all_zero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

std::string decode_error(const std::filesystem::path& path, std::uint64_t offset, std::string_view payload,
                         const std::string& why) {
  const std::uint64_t type = payload.size() >= kSignatureBytes ? detail::get_le(payload, 1, 4) : 0;
  return path.string() + ": the intact record at byte " + std::to_string(offset) + " (type " + std::to_string(type) +
         ") cannot be read by this lbo (" + why + "): the run was probably continued by a newer lbo. "
         "Continue it with that lbo; this one changed nothing";
}

std::string bytes_text(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

}  // namespace

std::string journal_header() {
  std::string header(kMagic, sizeof kMagic);
  detail::put_le(header, kFormatVersion, 4);
  return header;
}

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

namespace {

// Format versions a newer lbo could have written: the format changes only with the framing,
// rarely. Anything else in the header's version field (0, a high bit set) is damage.
bool plausibly_newer(std::uint32_t version) { return version > kFormatVersion && version <= kFormatVersion + 63; }

// Whether `first` (the bytes right after the header) starts with a record that reads as this
// format: an intact frame whose payload decodes. A newer format changes the framing, so its
// first record does not.
bool first_record_reads(std::string_view first) {
  const auto length = frame_at(first, 0, true);
  if (!length) return false;
  const std::string_view payload = first.substr(kFrameBytes, *length);
  if (detail::get_le(payload, 1, 4) >= kRecordTypes) return false;
  try {
    JournalRecord record;
    detail::decode_payload(payload, record);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// The records of `all` (the bytes from `start` on) into `contents`: intact ones decoded, damaged
// stretches between them kept as gaps, a write cut short at the end as torn bytes.
void read_records(std::string_view all, std::uint64_t start, const std::filesystem::path& path, JournalContents& contents) {
  contents.from = start;
  // Offsets in `all` are relative to `start`; what the caller sees is absolute.
  std::size_t at = 0;
  while (at < all.size()) {
    if (const auto length = frame_at(all, at, false)) {
      const std::string_view payload = all.substr(at + kFrameBytes, *length);
      if (payload.size() >= kSignatureBytes && detail::get_le(payload, 1, 4) >= kRecordTypes) {
        throw CorruptStateError(decode_error(path, start + at, payload, "an unknown record type"));
      }
      try {
        JournalRecord record;
        detail::decode_payload(payload, record);
        contents.records.push_back(std::move(record));
      } catch (const std::exception& e) {
        throw CorruptStateError(decode_error(path, start + at, payload, e.what()));
      }
      at += kFrameBytes + *length;
      contents.ends.push_back(start + at);
      continue;
    }
    const std::size_t next = next_frame(all, at);
    if (next != std::string_view::npos) {
      contents.damaged.push_back({start + at, next - at, contents.records.size(), all_zero(all.substr(at, next - at))});
      at = next;
      continue;
    }
    // Nothing intact follows. A write cut short (a length beyond the end, or zeros a crash left
    // where the data should be) is a torn tail; a whole record that fails its CRC is damage,
    // kept in the file like any other.
    const std::string_view tail = all.substr(at);
    const bool incomplete = tail.size() < kFrameBytes || detail::get_le(tail, 0, 4) > tail.size() - kFrameBytes;
    if (incomplete || all_zero(tail)) {
      contents.torn_bytes = tail.size();
    } else {
      contents.damaged.push_back({start + at, tail.size(), contents.records.size(), false});
    }
    break;
  }
}

// What reading found, said in the log's words.
void add_warnings(JournalContents& contents, std::uint64_t start, const std::filesystem::path& path) {
  const std::string file = path.string();
  if (contents.header_damaged) {
    contents.warnings.push_back(file + ": the header is damaged (not \"LBOJ\", format 1); the records after it were read "
                                "as format 1 (" + std::to_string(contents.records.size()) + " intact)");
  }
  for (const JournalGap& gap : contents.damaged) {
    contents.warnings.push_back(
        file + ": " + bytes_text(gap.bytes) + " at byte " + std::to_string(gap.offset) +
        (gap.zeros ? " hold only zeros" : " hold no intact record (damaged)") + "; skipped, and the " +
        std::to_string(contents.records.size() - gap.records_before) + " intact record(s) after them are kept");
  }
  if (contents.torn_bytes > 0) {
    contents.warnings.push_back(file + ": dropped " + bytes_text(contents.torn_bytes) + " of a torn last record at byte " +
                                std::to_string(contents.end_bytes) + " (a write cut short); kept " +
                                std::to_string(contents.records.size()) + " records" +
                                (start > kHeaderBytes ? " after the checkpoint" : ""));
  }
}

// The journal from its first bytes (`head`, the header or what there is of it), its first
// record (`first`: the bytes after the header, at least the first record's, looked at only when
// the header's version is not this lbo's) and the bytes from `start` on (`all`), of a file of
// `file_bytes`; `path` names it in messages.
JournalContents decode_parts(std::string_view head, std::string_view first, std::string_view all, std::uint64_t start,
                             std::uint64_t file_bytes, const std::filesystem::path& path) {
  JournalContents contents;
  contents.file_bytes = file_bytes;
  const std::string header = journal_header();
  std::uint32_t version = kFormatVersion;
  if (head.size() < kHeaderBytes) {
    // Created but killed before its header was written whole: a journal without records.
    if (header.compare(0, head.size(), head) == 0) {
      contents.header_torn = true;
      contents.from = contents.end_bytes = head.size();
      return contents;
    }
    contents.header_damaged = true;
  } else if (std::memcmp(head.data(), kMagic, sizeof kMagic) != 0) {
    contents.header_damaged = true;
  } else {
    version = static_cast<std::uint32_t>(detail::get_le(head, 4, 4));
  }
  read_records(all, start, path, contents);
  contents.end_bytes = contents.file_bytes - contents.torn_bytes;

  if (version != kFormatVersion) {
    // A newer format, or a damaged version field (issue 31: a flipped bit made a run whose
    // checkpoint covers the whole journal unresumable). A version no lbo writes is damage; a
    // plausible one is damage when the records read as format 1: the first one, which every
    // read looks at whatever the checkpoint covers, or all those after the checkpoint.
    const bool records_read = first_record_reads(first) || (!contents.records.empty() && contents.damaged.empty());
    if (plausibly_newer(version) && !records_read) {
      throw CorruptStateError(path.string() + ": journal format " + std::to_string(version) +
                              " is not supported by this lbo (format " + std::to_string(kFormatVersion) +
                              "): continue the run with the lbo that wrote it; this one changed nothing");
    }
    contents.header_damaged = true;
  }
  add_warnings(contents, start, path);
  return contents;
}

// Only the part after `from` is decoded: a checkpoint already holds what comes before.
std::uint64_t decode_start(std::uint64_t from, std::uint64_t file_bytes) {
  return std::min<std::uint64_t>(std::max<std::uint64_t>(from, kHeaderBytes), file_bytes);
}

}  // namespace

JournalContents decode_journal(std::string_view bytes, const std::filesystem::path& path, std::uint64_t from) {
  const std::uint64_t start = decode_start(from, bytes.size());
  const std::string_view head = bytes.substr(0, std::min<std::size_t>(bytes.size(), kHeaderBytes));
  return decode_parts(head, bytes.substr(head.size()), bytes.substr(static_cast<std::size_t>(start)), start,
                      bytes.size(), path);
}

JournalContents read_journal(const std::filesystem::path& path, std::uint64_t from) {
  if (const std::string what = not_a_regular_file(path); !what.empty()) {
    throw CorruptStateError(path.string() + " is " + what + ", not lbo's journal file; move it aside (the run's results "
                            "are in a journal.lbo that is a regular file)");
  }
  // The header and the part after `from`, not the prefix a checkpoint holds.
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptStateError(path.string() + ": cannot read the journal");
  in.seekg(0, std::ios::end);
  const auto file_bytes = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  std::string head(std::min<std::uint64_t>(file_bytes, kHeaderBytes), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  const std::uint64_t start = decode_start(from, file_bytes);
  std::string bytes(static_cast<std::size_t>(file_bytes - start), '\0');
  in.seekg(static_cast<std::streamoff>(start));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!in && !bytes.empty()) throw CorruptStateError(path.string() + ": cannot read the journal");
  // The first record too, when the header's version is not ours: it tells damage from a newer
  // format even when a checkpoint covers every record.
  std::string first;
  if (head.size() == kHeaderBytes && detail::get_le(head, 4, 4) != kFormatVersion && file_bytes > kHeaderBytes) {
    first.resize(static_cast<std::size_t>(std::min<std::uint64_t>(file_bytes - kHeaderBytes, kFrameBytes)));
    in.clear();
    in.seekg(static_cast<std::streamoff>(kHeaderBytes));
    in.read(first.data(), static_cast<std::streamsize>(first.size()));
    if (first.size() == kFrameBytes) {
      const std::uint64_t length = detail::get_le(first, 0, 4);
      if (length <= kMaxRecordBytes && length <= file_bytes - kHeaderBytes - kFrameBytes) {
        first.resize(kFrameBytes + length);
        in.read(first.data() + kFrameBytes, static_cast<std::streamsize>(length));
      }
    }
    if (!in) first.clear();
  }
  return decode_parts(head, first, bytes, start, file_bytes, path);
}

JournalWriter JournalWriter::create(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    if (errno == EEXIST) throw Error(path.string() + ": a journal exists already");
    fail_io(path, "cannot create the journal");
  }
  JournalWriter writer(path, fd, 0);
  writer.write_at(0, journal_header(), "cannot write the journal's header");
  writer.size_ = kHeaderBytes;
  writer.sync();
  sync_directory(path.parent_path());
  return writer;
}

JournalWriter JournalWriter::resume(const std::filesystem::path& path, const JournalContents& read, std::uint64_t min_bytes) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) fail_io(path, "cannot open the journal");
  JournalWriter writer(path, fd, std::max<std::uint64_t>(read.end_bytes, kHeaderBytes));
  if (read.header_damaged || read.header_torn) writer.write_at(0, journal_header(), "cannot rewrite the journal's header");
  if (read.torn_bytes > 0 && ::ftruncate(fd, static_cast<off_t>(read.end_bytes)) != 0) {
    fail_io(path, "cannot cut the torn last record");
  }
  if (writer.size_ < min_bytes) {
    if (::ftruncate(fd, static_cast<off_t>(min_bytes)) != 0) fail_io(path, "cannot extend the journal to the checkpoint's offset");
    writer.size_ = min_bytes;
  }
  writer.sync();
  return writer;
}

JournalWriter::JournalWriter(JournalWriter&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

JournalWriter& JournalWriter::operator=(JournalWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::write_at(std::uint64_t offset, const std::string& bytes, const char* what) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error_number = errno;
      // A partial record must not stay in front of the records written after the disk recovers.
      if (done > 0) {
        const int cut = ::ftruncate(fd_, static_cast<off_t>(offset));
        (void)cut;  // best effort: a reader skips a partial record in any case
      }
      fail_io(path_, what, error_number);
    }
    done += static_cast<std::size_t>(n);
  }
}

namespace {

// The fault point of the kill -9 tests (tests/integration/kill_resume.sh): with
// LBO_TEST_KILL_AFTER_RECORD=N, the process kills itself with SIGKILL right after appending
// its N-th record, so a test reaches every point of a run's history, however loaded the machine.
std::int64_t kill_after_record() {
  static const std::int64_t n = [] {
    const char* value = std::getenv("LBO_TEST_KILL_AFTER_RECORD");
    return value != nullptr ? std::strtoll(value, nullptr, 10) : 0;
  }();
  return n;
}

}  // namespace

void JournalWriter::append(const JournalRecord& record) {
  const std::string framed = frame_record(record);
  write_at(size_, framed, "cannot append a record");
  size_ += framed.size();
  static std::int64_t appended = 0;
  if (++appended == kill_after_record()) std::raise(SIGKILL);
}

void JournalWriter::sync() {
  if (::fdatasync(fd_) != 0) fail_io(path_, "fdatasync failed");
}

}  // namespace lbo::orchestrator
