#include "assets.hpp"

// The files go into .rodata with the assembler's .incbin: C++20 has no #embed, and a generated
// array of the 1 MB chart library's bytes would cost far more compile time than this. CMake
// passes each file's absolute path and makes this file depend on them (report/CMakeLists.txt).
#define LBO_EMBED(symbol, file)                     \
  asm(".pushsection .rodata\n"                      \
      ".balign 16\n"                                \
      ".global " #symbol "_begin\n" #symbol "_begin:\n" \
      ".incbin \"" file "\"\n"                      \
      ".global " #symbol "_end\n" #symbol "_end:\n" \
      ".popsection\n");                             \
  extern "C" const char symbol##_begin[];           \
  extern "C" const char symbol##_end[];

LBO_EMBED(lbo_report_template, LBO_REPORT_TEMPLATE)
LBO_EMBED(lbo_report_script, LBO_REPORT_SCRIPT)
LBO_EMBED(lbo_report_echarts, LBO_REPORT_ECHARTS)
LBO_EMBED(lbo_report_echarts_version, LBO_REPORT_ECHARTS_VERSION)
LBO_EMBED(lbo_compare_template, LBO_COMPARE_TEMPLATE)
LBO_EMBED(lbo_compare_script, LBO_COMPARE_SCRIPT)

namespace lbo::report::assets {

namespace {
std::string_view between(const char* begin, const char* end) { return {begin, static_cast<std::size_t>(end - begin)}; }
}  // namespace

std::string_view page_template() { return between(lbo_report_template_begin, lbo_report_template_end); }
std::string_view report_script() { return between(lbo_report_script_begin, lbo_report_script_end); }
std::string_view echarts() { return between(lbo_report_echarts_begin, lbo_report_echarts_end); }
std::string_view echarts_version() {
  const std::string_view text = between(lbo_report_echarts_version_begin, lbo_report_echarts_version_end);
  return text.substr(0, text.find('\n'));
}
std::string_view compare_template() { return between(lbo_compare_template_begin, lbo_compare_template_end); }
std::string_view compare_script() { return between(lbo_compare_script_begin, lbo_compare_script_end); }

std::string script_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') out += '\\';
  }
  return out;
}

std::string json_safe(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < json.size() && json[i + 1] == '\x80' && (json[i + 2] == '\xa8' || json[i + 2] == '\xa9')) {
      out += json[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace lbo::report::assets
