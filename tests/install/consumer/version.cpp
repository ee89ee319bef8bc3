// Links lbo::report, and with it every other exported library; exit 0 when the library's
// version is the one find_package(lbo) found.
#include <cstdio>
#include <string_view>

#include "lbo/orchestrator/version.hpp"

int main() {
  const std::string_view version = lbo::orchestrator::lbo_version();
  std::printf("lbo_version() %.*s, package %s\n", static_cast<int>(version.size()), version.data(),
              LBO_PACKAGE_VERSION);
  return version.starts_with(LBO_PACKAGE_VERSION) ? 0 : 1;
}
