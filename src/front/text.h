// Text helpers of the `cordon` front, without a C library (decision 0028): C strings, numbers
// and a fixed-size path builder that refuses to overflow.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace cordon::front {

inline size_t Length(const char* text) {
  size_t n = 0;
  while (text[n] != '\0') ++n;
  return n;
}

inline bool Equal(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

// `text` starts with `prefix`: the rest, else nullptr.
inline const char* After(const char* text, const char* prefix) {
  while (*prefix != '\0') {
    if (*text != *prefix) return nullptr;
    ++text, ++prefix;
  }
  return text;
}

// A NUL-terminated text of at most 4095 bytes; `ok` turns false for good on overflow.
struct PathText {
  char data[4096];
  size_t size = 0;
  bool ok = true;

  PathText() { data[0] = '\0'; }
  PathText& Add(const char* text, size_t n) {
    if (!ok || n >= sizeof data - size) {
      ok = false;
      return *this;
    }
    for (size_t i = 0; i < n; ++i) data[size + i] = text[i];
    size += n;
    data[size] = '\0';
    return *this;
  }
  PathText& Add(const char* text) { return Add(text, Length(text)); }
  PathText& AddNumber(uint64_t value) {
    char digits[24];
    size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    char forward[24];
    for (size_t i = 0; i < n; ++i) forward[i] = digits[n - 1 - i];
    return Add(forward, n);
  }
};

}  // namespace cordon::front
