#include "engine/model/time.h"

#include <charconv>
#include <cstdlib>

namespace qs {

void AppendSeconds(std::string& out, SimTime ms) {
  // Built in a local buffer and appended once (a log line has one or two).
  char buf[32];
  char* p = buf;
  if (ms < 0) {
    *p++ = '-';
    ms = -ms;
  }
  p = std::to_chars(p, buf + sizeof(buf), ms / kMillisPerSecond).ptr;
  *p++ = '.';
  const int frac = static_cast<int>(ms % kMillisPerSecond);
  if (frac == 0) {
    *p++ = '0';
  } else {
    *p++ = static_cast<char>('0' + frac / 100);
    *p++ = static_cast<char>('0' + (frac / 10) % 10);
    *p++ = static_cast<char>('0' + frac % 10);
    while (p[-1] == '0') --p;  // the first fraction digit stays: frac > 0
  }
  out.append(buf, p);
}

std::string FormatSeconds(SimTime ms) {
  std::string s;
  AppendSeconds(s, ms);
  return s;
}

}  // namespace qs
