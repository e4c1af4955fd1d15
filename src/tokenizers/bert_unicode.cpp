#include "bert_unicode.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <span>

namespace coinfer::bert {
namespace {

// Hugging Face's stages do not all use one version of Unicode:
//   general categories (is_control, is_punctuation, is_nonspacing_mark) come from the
//     unicode_categories crate, whose tables are Unicode 8.0;
//   NFD comes from unicode-normalization-alignments, whose tables are Unicode 9.0;
//   lowercase and White_Space come from Rust's standard library: Unicode 15.0 in tokenizers
//     0.15, like utf8proc 2.8 here. (Later tokenizers are built with Unicode 16.0 and lowercase
//     61 more letters, of scripts no BERT vocabulary has: the ids do not change.)
// The tables below hold every code point on which utf8proc 2.8 (Unicode 15.0) and those older
// tables disagree, found by running each code point, alone and among combining marks, through
// tokenizers 0.15.2 and 0.23.3 and through these stages, and comparing. Derive them again if
// utf8proc's Unicode version changes.

struct Range {
  char32_t first;
  char32_t last;
};

bool in(std::span<const Range> ranges, char32_t cp) noexcept {
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                                   [](char32_t c, const Range& r) { return c < r.first; });
  return it != ranges.begin() && cp <= std::prev(it)->last;
}

// Format characters (Cf) assigned after Unicode 8.0: kept by clean_text.
constexpr Range kNewFormat[] = {
    {0x890, 0x891}, {0x8E2, 0x8E2}, {0x110CD, 0x110CD}, {0x13430, 0x1343F}};

// Nonspacing marks (Mn) that were unassigned, or another category, in Unicode 8.0: kept by
// strip_accents.
constexpr Range kNewNonspacingMarks[] = {
    {0x7FD, 0x7FD},     {0x898, 0x89F},     {0x8CA, 0x8E1},     {0x9FE, 0x9FE},
    {0xAFA, 0xAFF},     {0xB55, 0xB55},     {0xC04, 0xC04},     {0xC3C, 0xC3C},
    {0xD00, 0xD00},     {0xD3B, 0xD3C},     {0xD81, 0xD81},     {0xEBA, 0xEBA},
    {0xECE, 0xECE},     {0x180F, 0x180F},   {0x1885, 0x1886},   {0x1ABF, 0x1ACE},
    {0x1DF6, 0x1DFB},   {0xA82C, 0xA82C},   {0xA8C5, 0xA8C5},   {0xA8FF, 0xA8FF},
    {0xA9BD, 0xA9BD},   {0x10D24, 0x10D27}, {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF},
    {0x10F46, 0x10F50}, {0x10F82, 0x10F85}, {0x11070, 0x11070}, {0x11073, 0x11074},
    {0x110C2, 0x110C2}, {0x111C9, 0x111C9}, {0x111CF, 0x111CF}, {0x1123E, 0x1123E},
    {0x11241, 0x11241}, {0x1133B, 0x1133B}, {0x11438, 0x1143F}, {0x11442, 0x11444},
    {0x11446, 0x11446}, {0x1145E, 0x1145E}, {0x1182F, 0x11837}, {0x11839, 0x1183A},
    {0x1193B, 0x1193C}, {0x1193E, 0x1193E}, {0x11943, 0x11943}, {0x119D4, 0x119D7},
    {0x119DA, 0x119DB}, {0x119E0, 0x119E0}, {0x11A01, 0x11A0A}, {0x11A33, 0x11A38},
    {0x11A3B, 0x11A3E}, {0x11A47, 0x11A47}, {0x11A51, 0x11A56}, {0x11A59, 0x11A5B},
    {0x11A8A, 0x11A96}, {0x11A98, 0x11A99}, {0x11C30, 0x11C36}, {0x11C38, 0x11C3D},
    {0x11C3F, 0x11C3F}, {0x11C92, 0x11CA7}, {0x11CAA, 0x11CB0}, {0x11CB2, 0x11CB3},
    {0x11CB5, 0x11CB6}, {0x11D31, 0x11D36}, {0x11D3A, 0x11D3A}, {0x11D3C, 0x11D3D},
    {0x11D3F, 0x11D45}, {0x11D47, 0x11D47}, {0x11D90, 0x11D91}, {0x11D95, 0x11D95},
    {0x11D97, 0x11D97}, {0x11EF3, 0x11EF4}, {0x11F00, 0x11F01}, {0x11F36, 0x11F3A},
    {0x11F40, 0x11F40}, {0x11F42, 0x11F42}, {0x13440, 0x13440}, {0x13447, 0x13455},
    {0x16F4F, 0x16F4F}, {0x16FE4, 0x16FE4}, {0x1CF00, 0x1CF2D}, {0x1CF30, 0x1CF46},
    {0x1E000, 0x1E006}, {0x1E008, 0x1E018}, {0x1E01B, 0x1E021}, {0x1E023, 0x1E024},
    {0x1E026, 0x1E02A}, {0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE},
    {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF}, {0x1E944, 0x1E94A},
};
// HANUNOO SIGN PAMUDPOD: Mn in Unicode 8.0, Mc since 14.0.
constexpr char32_t kOldNonspacingMark = 0x1734;

// Punctuation (P*) assigned after Unicode 8.0: not split off.
constexpr Range kNewPunctuation[] = {
    {0x61D, 0x61D},     {0x9FD, 0x9FD},     {0xA76, 0xA76},     {0xC77, 0xC77},
    {0xC84, 0xC84},     {0x1B7D, 0x1B7E},   {0x2E43, 0x2E4F},   {0x2E52, 0x2E5D},
    {0x10EAD, 0x10EAD}, {0x10F55, 0x10F59}, {0x10F86, 0x10F89}, {0x1144B, 0x1144F},
    {0x1145A, 0x1145B}, {0x1145D, 0x1145D}, {0x11660, 0x1166C}, {0x116B9, 0x116B9},
    {0x1183B, 0x1183B}, {0x11944, 0x11946}, {0x119E2, 0x119E2}, {0x11A3F, 0x11A46},
    {0x11A9A, 0x11A9C}, {0x11A9E, 0x11AA2}, {0x11B00, 0x11B09}, {0x11C41, 0x11C45},
    {0x11C70, 0x11C71}, {0x11EF7, 0x11EF8}, {0x11F43, 0x11F4F}, {0x11FFF, 0x11FFF},
    {0x12FF1, 0x12FF2}, {0x16E97, 0x16E9A}, {0x16FE2, 0x16FE2}, {0x1E95E, 0x1E95F},
};
// Po in Unicode 8.0, since then So (CANADIAN SYLLABICS CHI SIGN) and Mn (SHARADA SANDHI MARK).
constexpr char32_t kOldPunctuation[] = {0x166D, 0x111C9};

// DIVES AKURU VOWEL SIGN O (Unicode 13.0): its decomposition is newer than the NFD tables.
constexpr char32_t kUndecomposed = 0x11938;

// Combining marks (combining class > 0) assigned after Unicode 9.0: to NFD's tables they are
// unassigned, combining class 0, so they end a run of marks rather than being sorted into it.
constexpr Range kNewCombiningMarks[] = {
    {0x7FD, 0x7FD},     {0x898, 0x89F},     {0x8CA, 0x8D3},     {0x9FE, 0x9FE},
    {0xC3C, 0xC3C},     {0xD3B, 0xD3C},     {0xEBA, 0xEBA},     {0x1715, 0x1715},
    {0x1ABF, 0x1ACE},   {0x1DF6, 0x1DFA},   {0xA82C, 0xA82C},   {0x10D24, 0x10D27},
    {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50}, {0x10F82, 0x10F85},
    {0x11070, 0x11070}, {0x1133B, 0x1133B}, {0x1145E, 0x1145E}, {0x11839, 0x1183A},
    {0x1193D, 0x1193E}, {0x11943, 0x11943}, {0x119E0, 0x119E0}, {0x11A34, 0x11A34},
    {0x11A47, 0x11A47}, {0x11A99, 0x11A99}, {0x11D42, 0x11D42}, {0x11D44, 0x11D45},
    {0x11D97, 0x11D97}, {0x11F41, 0x11F42}, {0x16FF0, 0x16FF1}, {0x1E08F, 0x1E08F},
    {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF},
};

utf8proc_category_t category(char32_t cp) noexcept {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

}  // namespace

bool is_whitespace(char32_t cp) noexcept {
  if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85) return true;
  if (cp < 0x80) return false;
  const utf8proc_category_t c = category(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

bool is_control(char32_t cp) noexcept {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CO:
      return true;
    case UTF8PROC_CATEGORY_CF:
      return !in(kNewFormat, cp);
    default:
      return false;
  }
}

bool is_punctuation(char32_t cp) noexcept {
  if (cp < 0x80) {
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  }
  switch (category(cp)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return !in(kNewPunctuation, cp);
    default:
      return std::find(std::begin(kOldPunctuation), std::end(kOldPunctuation), cp) !=
             std::end(kOldPunctuation);
  }
}

bool is_chinese(char32_t cp) noexcept {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_nonspacing_mark(char32_t cp) noexcept {
  if (category(cp) == UTF8PROC_CATEGORY_MN) return !in(kNewNonspacingMarks, cp);
  return cp == kOldNonspacingMark;
}

int combining_class(char32_t cp) noexcept {
  const int combining_class =
      utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
  return combining_class != 0 && in(kNewCombiningMarks, cp) ? 0 : combining_class;
}

std::size_t decompose(char32_t cp, std::array<char32_t, 4>& out) noexcept {
  if (cp == kUndecomposed) {
    out[0] = cp;
    return 1;
  }
  std::array<utf8proc_int32_t, 4> decomposed;
  int boundclass = 0;
  const utf8proc_ssize_t length =
      utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), decomposed.data(),
                              decomposed.size(), UTF8PROC_DECOMPOSE, &boundclass);
  if (length <= 0 || static_cast<std::size_t>(length) > out.size()) {
    out[0] = cp;  // cannot happen: canonical decompositions are at most four code points
    return 1;
  }
  for (utf8proc_ssize_t i = 0; i < length; ++i) out[i] = static_cast<char32_t>(decomposed[i]);
  return static_cast<std::size_t>(length);
}

char32_t to_lower(char32_t cp) noexcept {
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

}  // namespace coinfer::bert
