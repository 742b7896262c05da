/**
 * Bumped whenever the engine (src/engine/) gives other CSS for the same page and stylesheets.
 * Embedded-mode cache keys carry it, so a build after an upgrade renders again instead of
 * serving CSS an older engine made. Here, not in engine/, because the cache key is made in
 * core/, which loads the engine only when a build renders.
 *
 * 2: custom properties used from SVG presentation attributes (`fill="var(--icon)"`) are kept.
 * 3: the first screen is checked with only the critical CSS, and rules of elements it showed out
 *    of place (pushed out by their own rules, widening the document) are added.
 * 4: a page with named cascade layers gets their whole order first (`@layer a,b,c;`); custom properties
 *    shadow trees above the fold read are kept, and so are a custom element's `:defined` rules; a page with
 *    dark-scheme rules is read in both colour schemes.
 * 5: a job's `states` are read in both colour schemes where the page has dark-scheme rules.
 */
export const ENGINE_REVISION = 5
