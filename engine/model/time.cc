#include "engine/model/time.h"

#include <cstdlib>

namespace qs {

void AppendSeconds(std::string& out, SimTime ms) {
  if (ms < 0) {
    out.push_back('-');
    ms = -ms;
  }
  out.append(std::to_string(ms / kMillisPerSecond));
  out.push_back('.');
  int frac = static_cast<int>(ms % kMillisPerSecond);
  if (frac == 0) {
    out.push_back('0');
    return;
  }
  char digits[3] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + (frac / 10) % 10),
                    static_cast<char>('0' + frac % 10)};
  int n = 3;
  while (n > 1 && digits[n - 1] == '0') --n;
  out.append(digits, static_cast<size_t>(n));
}

std::string FormatSeconds(SimTime ms) {
  std::string s;
  AppendSeconds(s, ms);
  return s;
}

}  // namespace qs
