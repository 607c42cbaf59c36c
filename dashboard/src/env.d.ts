/** Stylesheets imported for Vite to bundle. */
declare module '*.css';
