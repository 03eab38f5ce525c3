#!/usr/bin/env python3
# Fails when a public function of the meta library takes or returns a
# pointer without saying who owns it: each such parameter and return value
# needs a (transfer ...) annotation in its doc block.
#   check-annotations.py MODULE-decl.txt XML-DIR
# Reads gtk-doc's declarations (gtkdoc-scan) and the DocBook it wrote
# (gtkdoc-mkdb), where the annotations stand parsed beside each parameter.
import glob
import os
import re
import sys

decl_file, xml_dir = sys.argv[1], sys.argv[2]
with open(decl_file, encoding='utf-8') as f:
    decls = f.read()
docbook = ''
for path in sorted(glob.glob(os.path.join(xml_dir, '*.xml'))):
    with open(path, encoding='utf-8') as f:
        docbook += f.read()

problems = []
functions = re.findall(r'<FUNCTION>\s*<NAME>(\w+)</NAME>\s*'
                       r'<RETURNS>(.*?)</RETURNS>\s*(.*?)</FUNCTION>',
                       decls, re.S)
if not functions:
    sys.exit(f'{decl_file}: no function declared; is this gtk-doc output?')
for name, returns, params in functions:
    if '*' not in returns + params:
        # nothing to own (the _get_type functions, which gtk-doc files as
        # standard and leaves out of the reference, are such)
        continue
    anchor = name.replace('_', '-')
    block = re.search(r'<refsect2 id="%s" role="function">(.*?)</refsect2>'
                      % re.escape(anchor), docbook, re.S)
    if not block:
        problems.append(f'{name}: not in the generated reference')
        continue
    block = block.group(1)
    annotations = dict(re.findall(
        r'<entry role="parameter_name"><para>(\w+)</para></entry>.*?'
        r'<entry role="parameter_annotations">(.*?)</entry>', block, re.S))
    for param in params.split(','):
        param = param.strip()
        if '*' not in param:
            continue
        pname = re.search(r'(\w+)\s*(\[.*\])?$', param).group(1)
        if 'transfer' not in annotations.get(pname, ''):
            problems.append(f'{name}: parameter {pname} ({param}) has no '
                            '(transfer ...) annotation')
    if '*' in returns:
        ret = re.search(r'role="returns">(.*?)</refsect3>', block, re.S)
        if not ret or '<acronym>transfer' not in ret.group(1):
            problems.append(f'{name}: its {returns.strip()} return value has '
                            'no (transfer ...) annotation')

for p in problems:
    print(f'check-annotations: {p}', file=sys.stderr)
if problems:
    sys.exit(1)
print(f'check-annotations: the {len(functions)} functions say who owns '
      'every pointer they take or return')
