// The plan-diff comments as the privileged plan-diff-comment workflow posts them (docs/ci.md "Trust model").
// The bodies come from an artifact that the pull request's own code wrote, so they are untrusted data: only the
// default branch's copy of this file ever runs, and it posts a body only after neutralising what could ping people,
// reference other issues or hide content, under a line that says where the numbers came from.
'use strict';

const LIMIT = 65536; // GitHub refuses comment bodies over 65,536 characters
const MAX_STACKS = 20;
const FILE_NAME = /^[A-Za-z0-9._-]+\.md$/;
const ZWSP = '\u200B'; // a zero-width space: GitHub links neither `@\u200Bname` nor `#\u200B12`

function marker(stack) {
  return `<!-- tritonfleet-plan:${stack} -->`;
}

// Every `<` that does not open or close the report's own folding and small print (details, summary, sub) becomes
// `&lt;`: no other HTML, no hidden comment, no image tag. @user and @org/team mentions, #12, owner/repo#12, GH-12
// and issue or pull request URLs get a zero-width space, so nobody is notified and no other issue gets a
// back-reference; `![` loses its image (a remote image would load in every reader's browser).
function neutralise(text) {
  return text
    .replace(/<(?!\/?(?:details|summary|sub)>)/gi, '&lt;')
    .replace(/@(?=[A-Za-z0-9_-])/g, `@${ZWSP}`)
    .replace(/(?<!&)#(?=\d)/g, `#${ZWSP}`)
    .replace(/\bGH-(?=\d)/gi, (m) => `${m.slice(0, 2)}${ZWSP}-`)
    .replace(/\/(issues|pull|discussions)\/(?=\d)/g, `/$1/${ZWSP}`)
    .replace(/!\[/g, `!${ZWSP}[`);
}

function provenance(headSha) {
  const sha = /^[0-9a-f]{40}$/.test(headSha) ? headSha : 'unknown';
  return (
    `> Computed by this pull request's own code at \`${sha}\` in a job without secrets or cloud access, ` +
    'then posted by the base branch\'s workflow; mentions and references in it are neutralised (docs/ci.md).'
  );
}

// The body to post for one comment file, or null (with the reason) when the file is not a comment of ours.
function commentBody(file, text, headSha) {
  if (!FILE_NAME.test(file)) return { body: null, reason: `${file}: not a stack's comment file; not posted.` };
  const stack = file.slice(0, -'.md'.length);
  const mark = marker(stack);
  if (!text.startsWith(mark)) return { body: null, reason: `${file} does not start with its marker; not posted.` };
  const head = `${mark}\n${provenance(headSha)}\n`;
  const note = '\n\n…cut by the workflow to fit a comment.\n';
  let rest = neutralise(text.slice(mark.length));
  if (head.length + rest.length > LIMIT) rest = rest.slice(0, LIMIT - head.length - note.length) + note;
  return { stack, marker: mark, body: head + rest };
}

// The comment files of an artifact folder to post, in order, at most MAX_STACKS.
function commentFiles(names) {
  return names.filter((f) => FILE_NAME.test(f)).sort().slice(0, MAX_STACKS);
}

module.exports = { LIMIT, MAX_STACKS, marker, neutralise, provenance, commentBody, commentFiles };
