#!/usr/bin/env bash
# Builds the gtk-doc reference of the meta library (gst/cudabatchinfer/)
# into OUT/html, and fails on anything gtk-doc warns about: a public symbol
# without a doc block, a doc block without its description, a parameter or
# return value left undescribed, a pointer parameter or return value
# without a (transfer ...) annotation, a symbol of a doc block that the
# headers do not declare. Run by the docs-lib target of docs/libs/meson.build
# (meson setup -Ddoc=enabled):
#   gtkdoc.sh MODULE VERSION SRC_DIR MAIN_XML OUT
# OUT gets the HTML only; gtk-doc's work files, its log among them, are in
# OUT.work beside it.
set -euo pipefail
abs () { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
here=$(abs "$(dirname "$0")")
module=$1 version=$2 src=$(abs "$3") main_xml=$(abs "$4") out=$(abs "$5")
work=$out.work

rm -rf "$out" "$work"
mkdir -p "$work/xml" "$work/html"
cd "$work"
log=$work/gtkdoc.log
: >"$log"
fail () { echo "gtkdoc.sh: $*" >&2; exit 1; }

# The sections: one per header, in the headers' order. Every declaration
# lands in one, so a new public symbol is documented or the build fails.
gtkdoc-scan --module="$module" --source-dir="$src" --output-dir=. \
  --ignore-headers="cudabatchinfer-prelude.h gstbatchmeta-private.h" \
  --ignore-decorators='GST_CUDABATCHINFER_API' --rebuild-sections >>"$log" 2>&1
cp "$main_xml" "$module-docs.xml"
printf '<!ENTITY package_version "%s">\n' "$version" >xml/gtkdocentities.ent
gtkdoc-mkdb --module="$module" --source-dir="$src" --output-format=xml \
  --main-sgml-file="$module-docs.xml" --xml-mode --source-suffixes=h,c \
  --ignore-files=gstbatchmeta-private.c >>"$log" 2>&1
if grep -q 'warning:' "$log"; then
  grep 'warning:' "$log" >&2
  fail "gtk-doc warned (see above)"
fi

# gtk-doc's own test: undocumented, incomplete, undeclared or unused
DOC_MODULE=$module DOC_MAIN_SGML_FILE=$module-docs.xml BUILDDIR=$work \
  gtkdoc-check >check.log 2>&1 || { cat check.log >&2; fail "gtkdoc-check failed"; }

# Who owns what: every pointer a function takes or returns says so.
/usr/bin/python3 "$here/check-annotations.py" "$module-decl.txt" xml

(cd html && gtkdoc-mkhtml "$module" "../$module-docs.xml") >>"$log" 2>&1
# GStreamer's own API docs are hotdoc pages, not gtk-doc books: links to
# GstBuffer and friends stay plain text
gtkdoc-fixxref --module="$module" --module-dir=html >>"$log" 2>&1
[ -f html/index.html ] || fail "no html/index.html"
mv html "$out"
