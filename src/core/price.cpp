// Listing the quotes of a Price in one order (launch, street, used, cloud, reserved cloud).
#include "core/device.hpp"

namespace hwplan {

std::vector<PriceQuote> quotes_of(const Price& p) {
  std::vector<PriceQuote> out;
  auto source = [&](const char* kind) {
    auto it = p.sources.find(kind);
    return it == p.sources.end() ? std::string() : it->second;
  };
  if (p.launch_msrp_usd) out.push_back({"launch_msrp", *p.launch_msrp_usd, false, p.launch_msrp_date, "", source("launch_msrp")});
  if (p.street_usd) out.push_back({"street", *p.street_usd, false, p.street_date, "", source("street")});
  if (p.used_usd) out.push_back({"used", *p.used_usd, false, p.used_date, "", source("used")});
  if (p.cloud_usd_per_hour)
    out.push_back({"cloud", *p.cloud_usd_per_hour, true, p.cloud_date, p.cloud_provider, source("cloud")});
  if (p.cloud_reserved_usd_per_hour)
    out.push_back({"cloud_reserved", *p.cloud_reserved_usd_per_hour, true, p.cloud_reserved_date,
                   p.cloud_reserved_provider + (p.cloud_reserved_term.empty() ? "" : ", " + p.cloud_reserved_term),
                   source("cloud_reserved")});
  return out;
}

int months_between(const std::string& from_yyyy_mm, int to_year, int to_month) {
  if (from_yyyy_mm.size() != 7) return 0;
  int year = std::stoi(from_yyyy_mm.substr(0, 4));
  int month = std::stoi(from_yyyy_mm.substr(5, 2));
  return (to_year - year) * 12 + (to_month - month);
}

}  // namespace hwplan
