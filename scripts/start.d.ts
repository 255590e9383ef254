/** Types of start.js (plain JS so `npm start` needs no loader). */
export declare const BUILD_SOURCES: string[];
export declare function needsBuild(root?: string): boolean;
