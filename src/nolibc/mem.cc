// The memory functions the compiler may call for copies and zero-initialisation in cordon's
// executables without a C library (nolibc/sys.h, decision 0028). Built with -fno-builtin and
// without loop-to-call transformations, so that these loops never turn into calls of themselves.
#include <stddef.h>

extern "C" {

void* memset(void* destination, int value, size_t size) {
  unsigned char* d = static_cast<unsigned char*>(destination);
  for (size_t i = 0; i < size; ++i) d[i] = static_cast<unsigned char>(value);
  return destination;
}

void* memcpy(void* destination, const void* source, size_t size) {
  unsigned char* d = static_cast<unsigned char*>(destination);
  const unsigned char* s = static_cast<const unsigned char*>(source);
  for (size_t i = 0; i < size; ++i) d[i] = s[i];
  return destination;
}

void* memmove(void* destination, const void* source, size_t size) {
  unsigned char* d = static_cast<unsigned char*>(destination);
  const unsigned char* s = static_cast<const unsigned char*>(source);
  if (d < s) {
    for (size_t i = 0; i < size; ++i) d[i] = s[i];
  } else {
    for (size_t i = size; i > 0; --i) d[i - 1] = s[i - 1];
  }
  return destination;
}

int memcmp(const void* a, const void* b, size_t size) {
  const unsigned char* x = static_cast<const unsigned char*>(a);
  const unsigned char* y = static_cast<const unsigned char*>(b);
  for (size_t i = 0; i < size; ++i) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}

}  // extern "C"
