export const experimentTools = [];
