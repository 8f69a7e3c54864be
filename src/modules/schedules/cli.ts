export const schedulesCommand = undefined as never;
