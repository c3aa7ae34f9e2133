// Listing the quotes of a Price in one order (launch, street, used, cloud, reserved cloud).
#include "core/device.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>

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

std::pair<int, int> today_year_month() {
  // A pinned month (tests, reproducible reports): YYYY-MM, else the clock's.
  if (const char* pinned = std::getenv("HWPLAN_TODAY"); pinned && std::string(pinned).size() == 7 && pinned[4] == '-') {
    const int year = std::atoi(pinned), month = std::atoi(pinned + 5);
    if (year >= 1900 && month >= 1 && month <= 12) return {year, month};
  }
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  return {tm.tm_year + 1900, tm.tm_mon + 1};
}

std::string stale_price_note(const std::string& what, const std::string& device_id, const std::string& date) {
  auto [year, month] = today_year_month();
  if (date.empty() || months_between(date, year, month) <= 24) return "";
  return "the " + what + " of " + device_id + " is from " + date +
         ", more than two years old: give a current quote with --prices FILE";
}

std::string stale_purchase_price_note(const Device& d) {
  const Price& p = d.price;
  if (p.street_usd) return stale_price_note("street price", d.id, p.street_date);
  if (p.launch_msrp_usd) return stale_price_note("launch list price", d.id, p.launch_msrp_date);
  return "";
}

std::string stale_rental_price_note(const Device& d) {
  return d.price.cloud_usd_per_hour ? stale_price_note("on-demand rental price", d.id, d.price.cloud_date) : "";
}

}  // namespace hwplan
