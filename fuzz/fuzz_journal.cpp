// Fuzzes the journal decoder (what read_journal does with a file's bytes). Each input is
// decoded as it is (framing, resync over damage, torn tails) and, for inputs with a header,
// again with every frame's CRC set to match its payload, so that mutations reach cereal's
// decoding of the records instead of being skipped as damage; the second decode is repeated
// from a record boundary, as a resume after a checkpoint reads. A journal must decode or be
// rejected with a CorruptStateError (what read_journal documents); nothing else may escape.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "framing.hpp"

namespace {

constexpr std::size_t kHeaderBytes = 8;  // "LBOJ", u32 version
constexpr std::size_t kFrameBytes = 8;   // u32 payload length, u32 CRC-32

std::optional<lbo::orchestrator::JournalContents> decode(std::string_view bytes, std::uint64_t from) {
  static const std::filesystem::path kFile("journal.lbo");
  try {
    lbo::orchestrator::JournalContents contents = lbo::orchestrator::decode_journal(bytes, kFile, from);
    // What the decoder promises about what it found.
    if (contents.records.size() != contents.ends.size() || contents.end_bytes > contents.file_bytes ||
        contents.file_bytes != bytes.size() || !std::is_sorted(contents.ends.begin(), contents.ends.end()) ||
        (!contents.ends.empty() && contents.ends.back() > contents.end_bytes)) {
      std::abort();
    }
    for (const lbo::orchestrator::JournalRecord& record : contents.records) {
      (void)lbo::orchestrator::frame_record(record);  // a record read can be written again
    }
    return contents;
  } catch (const lbo::CorruptStateError&) {
    return std::nullopt;
  }
}

// `bytes` with each frame's CRC made to match: frames follow one another from the header on,
// a length running past the end (or 0) taken as "the rest".
std::string with_valid_crcs(std::string_view bytes) {
  std::string out(bytes);
  std::size_t at = kHeaderBytes;
  while (at + kFrameBytes < out.size()) {
    std::uint64_t length = lbo::orchestrator::detail::get_le(out, at, 4);
    const std::size_t room = out.size() - at - kFrameBytes;
    if (length == 0 || length > room) {
      length = room;
      for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((length >> (8 * i)) & 0xff);
    }
    const std::uint32_t crc = lbo::orchestrator::detail::crc32(std::string_view(out).substr(at + kFrameBytes, length));
    for (int i = 0; i < 4; ++i) out[at + 4 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
    at += kFrameBytes + length;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  decode(bytes, 0);
  if (size > kHeaderBytes + kFrameBytes) {
    const std::string framed = with_valid_crcs(bytes);
    const auto contents = decode(framed, 0);
    if (contents && !contents->ends.empty()) {
      // Resume after "a checkpoint" that covers some prefix of the records.
      const std::uint64_t from = contents->ends[static_cast<std::uint8_t>(bytes[kHeaderBytes]) % contents->ends.size()];
      decode(framed, from);
    }
  }
  return 0;
}
