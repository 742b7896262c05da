// adapter-static writes every page at build time.
export const prerender = true
