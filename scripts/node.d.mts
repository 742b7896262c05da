/** Types for scripts/node.mjs (plain JavaScript so CI can run it before `npm ci`). */
export declare const NODE_VERSIONS: Readonly<Record<'24' | '22' | '20', string>>
export declare function nodeHome(major: string | number): string
export declare function installNode(major: string | number): string
export declare function projectEnv(dir: string, env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv
export declare function runOn(major: string | number, command: string, args: readonly string[]): number
