import './site.css'

// The site's one script: marks the current page in the menu.
for (const link of document.querySelectorAll('.top a')) {
  if (link.getAttribute('href') === location.pathname) link.setAttribute('aria-current', 'page')
}
