// The built views (dist/views.js, written by scripts/build-apps.mjs from views.json and views/).
export interface ViewInfo {
  /** The view's name, as catalogs name it (`view` on an operation). */
  name: string;
  /** Its ui:// resource. */
  uri: string;
  title: string;
  description: string;
}

export declare const VIEWS: readonly ViewInfo[];

/** The view's self-contained HTML document; loaded on demand, so listing stays cheap. */
export declare function loadViewHtml(name: string): Promise<string>;
