export { handle, type SvelteKitEventLike, type SvelteKitHandleInput } from './runtime/sveltekit-handle.ts'
