/** The playground site's pages, as files below playground/site: both playground builds and the end-to-end tests build these. */
export const PAGES = ['index.html', 'pricing/index.html', 'about/index.html'] as const
