/** Generated pages and CSS for the benchmarks: the shape of what a build emits. */
/** Classes the pages use, and CSS for them: what a critical-CSS service would send back. */
export const CLASSES = ['site-header', 'nav', 'nav-link', 'hero', 'hero-title', 'card', 'card-title', 'card-body', 'tag', 'btn', 'btn-primary', 'footer', 'muted', 'thumb', 'list', 'list-item']
export const CSS = [
  ':root{--brand:#0b5fff;--ink:#1d1d1f;--muted:#6e6e73}',
  'html{font-family:system-ui,sans-serif;color:var(--ink)}body{margin:0;line-height:1.5}',
  ...CLASSES.flatMap((c, i) => [
    `.${c}{display:${i % 3 ? 'block' : 'flex'};padding:${i}px ${i * 2}px;margin:0 auto;max-width:${960 + i}px;background:url(/assets/${c}.png) no-repeat}`,
    `.${c}:hover{color:var(--brand)}`,
    `@media (min-width:${600 + i * 40}px){.${c}{padding:${i * 3}px}}`,
  ]),
].join('\n')
export const UNUSED_CSS = Array.from({ length: 120 }, (_, i) => `.unused-${i} .deep-${i} > a{color:#${(i * 4099).toString(16).padStart(6, '0').slice(0, 6)};border:1px solid}`).join('\n')
export const STYLESHEET = `${CSS}\n${UNUSED_CSS}`

export function page(targetBytes: number): string {
  const head = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Bench page</title>
  <meta name="description" content="A page of the size a build emits">
  <link rel="preconnect" href="https://cdn.example.com">
  <link rel="stylesheet" href="/assets/site.css">
  <link rel="icon" href="/favicon.ico">
  <script type="application/ld+json">{"@context":"https://schema.org","@type":"WebSite","name":"Bench"}</script>
</head>
<body>
  <header class="site-header"><nav class="nav">${CLASSES.map((c) => `<a class="nav-link" href="/${c}/">${c}</a>`).join('')}</nav></header>
  <section class="hero"><h1 class="hero-title">Critical CSS</h1><a class="btn btn-primary" href="/start/">Start</a></section>
  <main>
`
  const tail = `  </main>
  <footer class="footer"><p class="muted">&copy; 2026 Bench</p></footer>
  <script src="/assets/app.js" defer></script>
</body>
</html>
`
  let body = ''
  for (let i = 0; head.length + body.length + tail.length < targetBytes; i++) {
    body += `    <article class="card" id="card-${i}">
      <img class="thumb" src="/img/${i}.jpg" alt="Picture ${i}" width="320" height="180" loading="lazy">
      <h2 class="card-title">Card ${i} &amp; friends</h2>
      <div class="card-body"><p>Lorem ipsum dolor sit amet, <em>consectetur</em> adipiscing elit, sed do <strong>eiusmod</strong> tempor incididunt ut labore et dolore magna aliqua.</p>
        <ul class="list"><li class="list-item">One</li><li class="list-item">Two</li><li class="list-item"><a href="/x/${i}">Three</a></li></ul>
        <span class="tag">tag-${i % 7}</span></div>
    </article>
`
  }
  return head + body + tail
}

