export const scheduleTools = [];
