#include "policy/ansi_c_quote.h"

#include <cstdint>

namespace cordon::policy {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string& out, std::uint32_t cp) {
  if (cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Reads up to `max_digits` hex digits at body[i...]; returns the count read.
std::size_t ReadHex(std::string_view body, std::size_t i, std::size_t max_digits,
                    std::uint32_t& value) {
  std::size_t n = 0;
  value = 0;
  while (n < max_digits && i + n < body.size() && HexValue(body[i + n]) >= 0) {
    value = value * 16 + static_cast<std::uint32_t>(HexValue(body[i + n]));
    ++n;
  }
  return n;
}

}  // namespace

std::string DecodeAnsiC(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'e':
      case 'E':
        out += '\x1b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
      case '\'':
      case '"':
      case '?':
        out += e;
        break;
      case 'c':
        if (i + 1 < body.size()) out += static_cast<char>(body[++i] & 0x1F);
        break;
      case 'x': {
        std::uint32_t v = 0;
        std::size_t n = ReadHex(body, i + 1, 2, v);
        if (n == 0) {
          out += "\\x";
        } else {
          if (v == 0) return out;
          out += static_cast<char>(v);
          i += n;
        }
        break;
      }
      case 'u':
      case 'U': {
        std::uint32_t v = 0;
        std::size_t n = ReadHex(body, i + 1, e == 'u' ? 4 : 8, v);
        if (n == 0) {
          out += '\\';
          out += e;
        } else {
          if (v == 0) return out;
          AppendUtf8(out, v);
          i += n;
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          std::uint32_t v = 0;
          std::size_t n = 0;
          while (n < 3 && i + n < body.size() && body[i + n] >= '0' && body[i + n] <= '7') {
            v = v * 8 + static_cast<std::uint32_t>(body[i + n] - '0');
            ++n;
          }
          if ((v & 0xFF) == 0) return out;
          out += static_cast<char>(v & 0xFF);
          i += n - 1;
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

}  // namespace cordon::policy
