// Fuzzes the checkpoint decoder. Each input is decoded twice: as it is (the header checks), and
// with its length and CRC fields set to match its payload, so that mutations reach cereal's
// decoding of the payload instead of failing the checksum. A damaged checkpoint must be
// rejected with a CorruptStateError (what decode_checkpoint documents); nothing else may escape.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/checkpoint.hpp"
#include "framing.hpp"

namespace {

constexpr std::size_t kHeaderBytes = 20;  // "LBOC", u32 version, u64 payload length, u32 CRC-32

void decode(std::string_view bytes) {
  static const std::filesystem::path kFile("checkpoint.1.lbo");
  try {
    const lbo::orchestrator::Checkpoint checkpoint = lbo::orchestrator::decode_checkpoint(bytes, kFile);
    // What a decoded checkpoint holds must encode again (a resume writes it back).
    (void)lbo::orchestrator::encode_checkpoint(checkpoint);
  } catch (const lbo::CorruptStateError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  decode(bytes);
  if (size >= kHeaderBytes) {
    std::string framed(bytes.substr(0, 8));
    const std::string_view payload = bytes.substr(kHeaderBytes);
    lbo::orchestrator::detail::put_le(framed, payload.size(), 8);
    lbo::orchestrator::detail::put_le(framed, lbo::orchestrator::detail::crc32(payload), 4);
    framed += payload;
    decode(framed);
  }
  return 0;
}
