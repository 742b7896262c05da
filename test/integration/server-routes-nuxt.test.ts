/**
 * Issue 50, Nuxt 4 end to end: a server build (`nuxt build`, Nitro's node-server preset) with
 * our module and without it (test/fixtures/server-route-checks.ts has the checks every
 * framework passes): the Nitro plugin gives each page of a covered route its CSS, and an
 * error page of a covered route, a payload and a file go out as Nitro made them.
 */
import { buildNuxtServerApp, createNuxtServerApp, removeNuxtServerApp, startNuxtServer } from '../fixtures/nuxt-server-app.ts'
import { describeServerRoutes } from '../fixtures/server-route-checks.ts'

describeServerRoutes({
  name: 'Nuxt 4 (nuxt build, node-server)',
  create: createNuxtServerApp,
  remove: removeNuxtServerApp,
  build: buildNuxtServerApp,
  out: '.output',
  manifest: 'server/critical-css.json',
  start: startNuxtServer,
  postsRoute: '/posts/:slug()',
  routes: ['/posts/:slug()', '/about', '/pricing', '/'],
  covered: ['/about', '/'],
  uncovered: ['/posts/nope', '/no-such-page', '/posts/hello/_payload.json'],
})
